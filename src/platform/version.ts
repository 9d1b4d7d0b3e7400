import { existsSync, readFileSync } from 'node:fs';

/**
 * mkt's version, read once from its package.json: the nearest one above this module (one level up
 * from the bundle, dist/mkt.cjs; two from tsc's output in build/platform/ or src/platform/).
 */
export const VERSION: string = (() => {
  let url = new URL('../package.json', import.meta.url);
  if (!existsSync(url)) url = new URL('../../package.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
})();

/** The User-Agent every request carries: mkt, its version, Node and the platform. */
export function userAgent(): string {
  return `mkt/${VERSION} (node ${process.version}; ${process.platform} ${process.arch})`;
}
