/** bin/mkt of the standalone archive: the Node beside its real path runs bin/run.js. */
export function standaloneLauncher(): string;
/** /usr/bin/mkt of the .deb: /usr/lib/mkt's Node, found beside its real path. */
export function debLauncher(): string;
