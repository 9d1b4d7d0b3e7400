import type { SandboxContext } from '../support/sandbox.js';

/** Calls the sandbox's API with the seeded test key (or `token`); the body parsed when there is one. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a test reads the answers it expects
type Json = any;

export async function api(
  ctx: SandboxContext,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<{ status: number; json: Json }> {
  const auth: Record<string, string> = options.token
    ? { authorization: `Bearer ${options.token}` }
    : { 'x-api-key': ctx.sandbox.seed.test_key };
  const res = await fetch(`${ctx.sandbox.siteUrl}/api/v1${path}`, {
    method,
    headers: { ...auth, 'content-type': 'application/json' },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}
