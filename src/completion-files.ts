// What `mkt autocomplete [SHELL]` kept beside its text (src/boot.ts, helpFromCache): what it wrote
// to stderr, and the completion files as it left them.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The line kept after the key: stderr's text and the files; undefined when it is not one. */
export function parseMeta(line: string): { stderr: string; files: unknown } | undefined {
  try {
    const meta = JSON.parse(line);
    return typeof meta?.stderr === 'string' ? meta : undefined;
  } catch {
    return undefined;
  }
}

/** mkt's completion files (ROOT: oclif's autocomplete folder in the cache folder), each as `size@mtime`. */
export function completionFiles(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  try {
    for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const info = statSync(path);
      files[path] = `${info.size}@${info.mtimeMs}`;
    }
  } catch {
    // none yet
  }
  return Object.fromEntries(Object.entries(files).sort());
}
