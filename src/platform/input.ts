import type { Readable } from 'node:stream';
import { UsageError } from '../errors.js';

/**
 * The text of `source`: all of stdin for `-`, else the file of that name. A file that cannot be
 * read is a UsageError naming it.
 */
export async function readInput(
  deps: { stdin: Readable },
  source: string,
  /** Past `maxBytes` of stdin, a UsageError naming `what` (nothing more is read or kept). */
  limit?: { maxBytes: number; what: string },
): Promise<string> {
  if (source === '-') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of deps.stdin) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      size += bytes.length;
      if (limit && size > limit.maxBytes) {
        deps.stdin.destroy();
        throw new UsageError(
          `${limit.what} on stdin is larger than ${limit.maxBytes / 1024} KiB (at least ${size} bytes came); is it the right input?`,
          { code: 'input_too_large' },
        );
      }
      chunks.push(bytes);
    }
    return Buffer.concat(chunks).toString('utf8');
  }
  const { readFile } = await import('node:fs/promises');
  try {
    return await readFile(source, 'utf8');
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new UsageError(`Cannot read ${source}: ${reason}.`, { code: 'input_unreadable' });
  }
}
