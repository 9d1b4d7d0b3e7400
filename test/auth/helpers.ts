import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The programs that play the person in the browser. */
export const PERSON = fileURLToPath(new URL('../fixtures/auth/person.js', import.meta.url));
export const CHROMIUM_PERSON = fileURLToPath(new URL('../fixtures/auth/chromium.js', import.meta.url));

/** An MKT_BROWSER value that runs a Node program with the URL as its last argument. */
export function browserCommand(script: string): string {
  return `"${process.execPath}" "${script}"`;
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

/** Lines a fixture appended to its log file. */
export async function readLog(path: string): Promise<string[]> {
  try {
    return (await readFile(path, 'utf8')).trim().split('\n');
  } catch {
    return [];
  }
}
