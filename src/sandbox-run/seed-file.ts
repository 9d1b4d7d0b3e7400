import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { checkJsonDepth } from '../platform/bounded.js';
import { isRefused } from '../platform/refused.js';

/** The largest fixtures file read (bytes), and its deepest nesting: far past any real one. */
const MAX_SEED_BYTES = 16 * 1024 * 1024;
const MAX_SEED_DEPTH = 64;
import type { Fixtures } from '../sandbox/fixtures/schema.js';

/** Reads and checks a `--seed` file before anything starts; a bad one is a usage error (exit 2) naming line and field. */
export async function readSeedFile(path: string): Promise<{ fixtures: Fixtures; digest: string }> {
  let text: string;
  try {
    const size = (await stat(path)).size;
    if (size > MAX_SEED_BYTES)
      throw new UsageError(
        `The fixtures file ${path} is larger than ${MAX_SEED_BYTES} bytes (${size}); mkt does not read it.`,
        {
          code: 'seed_invalid',
        },
      );
    text = await readFile(path, 'utf8');
    checkJsonDepth(text, `The fixtures file ${path}`, MAX_SEED_DEPTH);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if (isRefused(e)) throw new UsageError(e.message, { code: 'seed_invalid' });
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
