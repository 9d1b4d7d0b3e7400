// The launchers of the standalone archive (bin/mkt) and the .deb (/usr/bin/mkt): POSIX sh, one
// `exec`, no other program unless started through a link. Both find what they run beside their
// real path: a link to them (~/bin/mkt -> /usr/bin/mkt) is followed first, so that a `node` next to
// the link's folder is never the one run.

/** The lines that set `self` to the script's real path (links followed, with readlink only then). */
const FOLLOW_LINKS = `self=$0
while [ -h "$self" ]; do
  link=$(readlink "$self")
  case $link in /*) self=$link ;; *) self=\${self%/*}/$link ;; esac
done`;

/** bin/mkt of the standalone archive: the Node beside it runs bin/run.js. */
export const standaloneLauncher = () => `#!/bin/sh
# mkt, standalone: the Node shipped beside this script runs mkt (never the one on PATH).
${FOLLOW_LINKS}
dir=\${self%/*}
exec "$dir/node" "$dir/run.js" "$@"
`;

/** /usr/bin/mkt of the .deb: /usr/lib/mkt's Node, found beside its real path (dpkg --root installs too). */
export const debLauncher = () => `#!/bin/sh
# mkt from its .deb: the Node in /usr/lib/mkt runs it (never the one on PATH).
${FOLLOW_LINKS}
lib=\${self%/*}/../lib/mkt
[ -x "$lib/bin/node" ] || lib=/usr/lib/mkt
exec "$lib/bin/node" "$lib/bin/run.js" "$@"
`;
