import { existsSync, readFileSync } from 'node:fs';

/**
 * mkt's version, read once from its package.json: the nearest one above this module (one level up
 * from the bundle, dist/mkt.cjs; two from tsc's output in build/platform/ or src/platform/).
 */
const PACKAGE_URL: URL = (() => {
  const url = new URL('../package.json', import.meta.url);
  return existsSync(url) ? url : new URL('../../package.json', import.meta.url);
})();
const PACKAGE = JSON.parse(readFileSync(PACKAGE_URL, 'utf8')) as {
  version: string;
  mkt?: { install?: string };
};

/** mkt's version. */
export const VERSION: string = PACKAGE.version;

/** How this copy was installed: set in package.json by scripts/pack-standalone.js; npm otherwise. */
export const INSTALL: 'npm' | 'standalone' | 'deb' =
  PACKAGE.mkt?.install === 'standalone' || PACKAGE.mkt?.install === 'deb' ? PACKAGE.mkt.install : 'npm';

/** The folder mkt is installed in (the one holding its package.json, bin/ and dist/). */
export const INSTALL_DIR: URL = new URL('.', PACKAGE_URL);

/** The User-Agent every request carries: mkt, its version, Node and the platform. */
export function userAgent(): string {
  return `mkt/${VERSION} (node ${process.version}; ${process.platform} ${process.arch})`;
}
