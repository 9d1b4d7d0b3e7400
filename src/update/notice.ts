// Word of a newer mkt, as gh and oclif's plugin-warn-if-update-available give it: on stderr, at
// most once a day, from what a detached background process (bin/update-check.js) last read from the
// registry, so no command ever waits for the network. Never under CI, with --json or --jq, when
// stderr is not a terminal, or with MKT_NO_UPDATE_NOTIFIER. Why not the oclif plugin:
// docs/DECISIONS.md (update notice).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCI } from '../output/colour.js';
import { readOwnFileSync, writeFileAtomicSync } from '../platform/fs-atomic.js';
import { cacheDir } from '../platform/paths.js';
import { folderChainProblem } from '../platform/private-folder.js';
import { spawnDetached } from '../platform/processes.js';
import { INSTALL, INSTALL_DIR, VERSION } from '../platform/version.js';

type Env = Record<string, string | undefined>;
const DAY = 24 * 3600 * 1000;
/** The registry asked for mkt's latest version (MKT_UPDATE_REGISTRY: a mirror, or a test's). */
export const DEFAULT_REGISTRY = 'https://registry.npmjs.org/';

/** What the background check last found, and when the user was last told. */
interface UpdateState {
  checked_at?: number;
  latest?: string;
  notified_at?: number;
}

/**
 * After a command: says on stderr that a newer mkt exists (once a day), and starts the background
 * check when the last one is a day old. Costs nothing when a condition rules it out.
 */
export function updateNotice(input: {
  env: Env;
  stderr: { isTTY?: boolean; write(text: string): unknown };
  json: boolean;
  now?: number;
}): void {
  const { env, stderr } = input;
  if (input.json || !stderr.isTTY || isCI(env) || env.MKT_NO_UPDATE_NOTIFIER) return;
  const now = input.now ?? Date.now();
  const folder = cacheDir(env);
  // The folder the code cache trusts, by the same rule: anyone else who could write there could
  // plant a link (written through) or a file of theirs (announced). Then there is no word at all.
  if (folderChainProblem(folder)) return;
  const file = join(folder, 'update-check.json');
  let state: UpdateState = {};
  try {
    state = JSON.parse(
      readOwnFileSync(file, { maxBytes: 4096, code: 'update_state_unsafe' }) ?? '{}',
    ) as UpdateState;
  } catch {
    // an unreadable file, a link, another user's: the check below replaces it
  }
  let check = false;
  const told = state.latest && isNewer(state.latest, VERSION) && !(now - (state.notified_at ?? 0) < DAY);
  if (told) {
    stderr.write(updateMessage(INSTALL, VERSION, state.latest!, fileURLToPath(INSTALL_DIR)));
    state.notified_at = now;
  }
  if (!(now - (state.checked_at ?? 0) < DAY)) {
    // Marked before the check starts, so that runs meanwhile start no other (and so that the
    // check's answer is never overwritten by this write).
    state.checked_at = now;
    check = true;
  }
  if (told || check) {
    try {
      writeFileAtomicSync(file, `${JSON.stringify(state)}\n`);
    } catch {
      // no cache folder yet, or a read-only one: the check makes it, or there is no word this time
    }
  }
  if (check) startCheck(file, env.MKT_UPDATE_REGISTRY || DEFAULT_REGISTRY, env);
}

/** The notice, telling how to update the way this copy was installed. */
export function updateMessage(install: typeof INSTALL, current: string, latest: string, dir: string): string {
  const head = `A new version of mkt is available: ${current} → ${latest}.\n`;
  const platform = `${process.platform}-${process.arch}`;
  const check = 'check it with `sha256sum -c --ignore-missing SHA256SUMS`';
  if (install === 'standalone')
    return `${head}  Update: download mkt-v${latest}-${platform}.tar.gz and SHA256SUMS from where you got mkt, ${check}, then unpack it over ${dir.replace(/[\\/]mkt[\\/]?$/, '')}\n`;
  if (install === 'deb')
    return `${head}  Update: download mkt_${latest}_${process.arch === 'x64' ? 'amd64' : process.arch}.deb and SHA256SUMS from where you got mkt, ${check}, then: sudo dpkg -i mkt_${latest}_*.deb\n`;
  return `${head}  Update: npm install -g mkt@latest\n`;
}

/** `a` is a later release than `b` (major.minor.patch; a pre-release is never offered). */
export function isNewer(a: string, b: string): boolean {
  const parse = (v: string) => /^(\d+)\.(\d+)\.(\d+)$/.exec(v)?.slice(1).map(Number);
  const [x, y] = [parse(a), parse(b)];
  if (!x || !y) return false;
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! > y[i]!;
  return false;
}

/**
 * The background check: bin/update-check.js in a detached process that outlives this one. Its
 * environment holds only what reaching the registry needs (never a credential).
 */
function startCheck(file: string, registry: string, env: Env): void {
  const keep = ['PATH', 'HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];
  keep.push('NODE_EXTRA_CA_CERTS', 'SYSTEMROOT');
  const childEnv = Object.fromEntries(keep.filter((k) => env[k] !== undefined).map((k) => [k, env[k]]));
  const script = fileURLToPath(new URL('bin/update-check.js', INSTALL_DIR));
  spawnDetached(process.execPath, [script, file, registry], {
    stdio: 'ignore',
    env: childEnv,
  }).process.unref();
}
