import { readFileSync } from 'node:fs';

/** mkt's version, read once from package.json (the same file in src/ and dist/ layouts). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** The User-Agent every request carries: mkt, its version, Node and the platform. */
export function userAgent(): string {
  return `mkt/${VERSION} (node ${process.version}; ${process.platform} ${process.arch})`;
}
