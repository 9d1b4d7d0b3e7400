import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import type { Fixtures } from '../sandbox/fixtures/schema.js';

/** Reads and checks a `--seed` file before anything starts; a bad one is a usage error (exit 2) naming line and field. */
export async function readSeedFile(path: string): Promise<{ fixtures: Fixtures; digest: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(
      `Cannot read the fixtures file ${path}: ${(e as NodeJS.ErrnoException).code ?? String(e)}.`,
      {
        code: 'seed_unreadable',
      },
    );
  }
  const { parseFixtures, FixturesError } = await import('../sandbox/start-sandbox.js');
  try {
    return { fixtures: parseFixtures(text, path), digest: createHash('sha256').update(text).digest('hex') };
  } catch (e) {
    if (e instanceof FixturesError) throw new UsageError(e.message, { code: 'seed_invalid' });
    throw e;
  }
}
