import type { Readable } from 'node:stream';
import { UsageError } from '../errors.js';

/**
 * The text of `source`: all of stdin for `-`, else the file of that name. A file that cannot be
 * read is a UsageError naming it.
 */
export async function readInput(deps: { stdin: Readable }, source: string): Promise<string> {
  if (source === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of deps.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
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
