import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';

/** The programs that play the person in the browser. */
export const PERSON = fileURLToPath(new URL('../fixtures/auth/person.js', import.meta.url));
export const CHROMIUM_PERSON = fileURLToPath(new URL('../fixtures/auth/chromium.js', import.meta.url));

/** An MKT_BROWSER value that runs a Node program with the URL as its last argument. */
export function browserCommand(script: string): string {
  return `"${process.execPath}" "${script}"`;
}

/** A browser sign-in to `sandbox`: its site, the seeded app's client secret, person.js as the browser. */
export function signInEnv(sandbox: Pick<Sandbox, 'siteUrl' | 'seed'>) {
  return {
    MKT_SITE_URL: sandbox.siteUrl,
    MKT_CLIENT_SECRET: sandbox.seed.app.client_secret,
    MKT_BROWSER: browserCommand(PERSON),
  };
}

/** The file credential store of a config folder ({} when nothing was written). */
export async function storedSecrets(configDir: string): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(join(configDir, 'credentials.json'), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

/** The stored OAuth token set of a profile, parsed. */
export async function storedToken(
  configDir: string,
  profile = 'default',
): Promise<Record<string, unknown> | undefined> {
  const raw = (await storedSecrets(configDir))[`${profile}:oauth`];
  return raw ? (JSON.parse(raw) as Record<string, unknown>) : undefined;
}

/**
 * Lines a fixture appended to its log file. With `until`, first waits (up to 10 s) for a line that
 * matches it: the fixture runs on its own and may write its last line a moment after mkt exits.
 */
export async function readLog(path: string, until?: RegExp): Promise<string[]> {
  const read = async () => {
    try {
      return (await readFile(path, 'utf8')).trim().split('\n');
    } catch {
      return [];
    }
  };
  for (let i = 0; until && i < 100 && !(await read()).some((line) => until.test(line)); i++)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return read();
}

/** The authorization URL a headless `mkt login` prints. */
export const AUTHORIZE_URL = /(http:\/\/\S+\/oauth\/authorize\?\S+)/;

/**
 * The person approves the consent page on "another machine" (person.js with PERSON_PRINT): returns
 * the address the browser was sent to, which never reaches mkt's listener.
 */
export async function approveElsewhere(url: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [PERSON, url], {
    env: { ...process.env, ...env, PERSON_PRINT: '1' },
  });
  return stdout;
}
