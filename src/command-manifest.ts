// Bundled into dist/boot.js with src/boot.ts (bin/run.js calls it through boot): which manifest a
// run reads. __dirname is dist/.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The manifest holding only the command this command line runs (dist/manifests, written by
 * scripts/split-manifest.js), when oclif, given every command, would run exactly that one: the
 * longest leading words naming a command, followed by nothing, a flag, or a word that is no command
 * or topic under it and that the command takes. Else undefined: help (`--help`, `-h`, `help`), a
 * topic, a word that is no command (whose suggestions need them all), `autocomplete` (which writes
 * them all), and a manifest that is not the one split (another size). oclif still parses and runs the command as
 * always; it builds one command's entry instead of 65 (BENCHMARKS.md, issue 51).
 */
export function commandManifest(args: string[]): string | undefined {
  const end = args.indexOf('--');
  const before = end < 0 ? args : args.slice(0, end);
  if (before.some((a) => a === '--help' || a === '-h' || a === '--version')) return undefined;
  const dir = join(__dirname, 'manifests');
  const index = readIndex(join(dir, 'index.json'));
  if (!index) return undefined;
  let id: string | undefined;
  let length = 0;
  for (let i = 0; i < before.length && /^[a-z][a-z0-9-]*$/.test(before[i]!); i++) {
    const name = before.slice(0, i + 1).join(':');
    if (!index.usable.has(name)) break;
    if (name in index.commands) [id, length] = [name, i + 1];
  }
  if (!id || id === 'help' || id.split(':')[0] === 'autocomplete') return undefined;
  const next = args[length];
  if (next !== undefined && next !== '--' && !next.startsWith('-')) {
    if (index.usable.has(`${id}:${next}`) || !index.commands[id]) return undefined;
  }
  const info = statSync(join(__dirname, '..', 'oclif.manifest.json'), { throwIfNoEntry: false });
  if (!info || info.size !== index.manifest) return undefined;
  return join(dir, `${id.replaceAll(':', '.')}.json`);
}

/** dist/manifests/index.json (scripts/split-manifest.js), or undefined. */
function readIndex(
  path: string,
): { manifest: number; usable: Set<string>; commands: Record<string, boolean> } | undefined {
  try {
    const { manifest, usable, commands } = JSON.parse(readFileSync(path, 'utf8'));
    return { manifest, usable: new Set(usable), commands };
  } catch {
    return undefined;
  }
}
