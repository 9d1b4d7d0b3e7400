import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Debian's libfaketime, wherever the architecture put it. */
export function libfaketime(): string {
  const dirs = ['/usr/lib', ...readdirSync('/usr/lib').map((d) => join('/usr/lib', d))];
  const found = dirs.map((d) => join(d, 'faketime', 'libfaketime.so.1')).find((p) => existsSync(p));
  if (!found) throw new Error('libfaketime is missing: apt-get install faketime');
  return found;
}

/**
 * The environment that runs mkt's clock `speed` times faster than the real one (libfaketime, the
 * monotonic clock and sleeps included): a 5 s polling interval passes in 5/speed s, with no change to mkt.
 */
export function fastClock(speed: number): Record<string, string> {
  return { LD_PRELOAD: libfaketime(), FAKETIME: `+0 x${speed}` };
}

/** What `mkt login --device` prints: the verification address with the code filled in, and the code. */
export const DEVICE_PROMPT = /Or open (\S+) \(the code is filled in\)/;
export const USER_CODE = /enter the code:\n\n {2}(\S+)\n/;

/** A cookie-keeping form submitter, for verification pages that keep their state in a session cookie. */
export class CookieBrowser {
  private readonly jar = new Map<string, string>();

  async go(url: string | URL, init: { form?: Record<string, string> } = {}): Promise<Response> {
    let target = new URL(url);
    let method = init.form ? 'POST' : 'GET';
    let body: string | undefined = init.form ? new URLSearchParams(init.form).toString() : undefined;
    for (let hop = 0; hop < 20; hop++) {
      const cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
      const headers: Record<string, string> = cookie ? { cookie } : {};
      if (body !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
      const res = await fetch(target, { method, body, redirect: 'manual', headers });
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const eq = pair!.indexOf('=');
        this.jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
      }
      const location = res.headers.get('location');
      if (!location) return res;
      target = new URL(location, target);
      method = 'GET';
      body = undefined;
    }
    throw new Error('too many redirects');
  }
}

/** The value of a hidden form field in a page. */
export function hiddenField(html: string, name: string): string {
  const match = new RegExp(`name="${name}"[^>]*value="([^"]*)"|value="([^"]*)"[^>]*name="${name}"`).exec(
    html,
  );
  if (!match) throw new Error(`no field ${name} in ${html.slice(0, 400)}`);
  return (match[1] ?? match[2])!;
}

/**
 * The person at oidc-provider's verification page (RFC 8628 §3.3): submits the code, then confirms
 * it (or aborts); the provider's interaction, which signs in and consents at once, does the rest.
 * Answers the last page's text.
 */
export async function answerOidcDevice(url: string, decision: 'approve' | 'deny'): Promise<string> {
  const browser = new CookieBrowser();
  let html = await (await browser.go(url)).text();
  const action = new URL('/device', url);
  // The page submits itself: the code, with its anti-CSRF token.
  html = await (
    await browser.go(action, {
      form: { xsrf: hiddenField(html, 'xsrf'), user_code: hiddenField(html, 'user_code') },
    })
  ).text();
  const form: Record<string, string> = {
    xsrf: hiddenField(html, 'xsrf'),
    user_code: hiddenField(html, 'user_code'),
    ...(decision === 'approve' ? { confirm: 'yes' } : { abort: 'yes' }),
  };
  return (await browser.go(action, { form })).text();
}
