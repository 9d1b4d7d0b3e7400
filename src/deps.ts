import { DEFAULT_SITE_URL } from './wire.js';
import type { Readable, Writable } from 'node:stream';
import { ApiClient } from './api/client.js';
import { Session } from './auth/session.js';
import { systemClock, type Clock } from './platform/clock.js';
import { checkConfigDir, ConfigStore } from './config/store.js';
import { AutoStore } from './credentials/store.js';
import { UsageError } from './errors.js';
import type { JqFilter } from './output/jq.js';
import { Output } from './output/output.js';
import { configDir } from './platform/paths.js';
import { userAgent } from './platform/version.js';
import { siteUrl as checkedSiteUrl } from './urls.js';

/** Where the sandbox listens by default, and so the site used when nothing else is set. */

/** Everything domain code may touch, built once per command (docs/CONTRIBUTING.md: no globals). */
export interface Deps {
  env: Record<string, string | undefined>;
  stdin: Readable & { isTTY?: boolean };
  out: Output;
  clock: Clock;
  profile: string;
  configDir: string;
  config: ConfigStore;
  credentials: AutoStore;
  siteUrl: string;
  siteUrlSource: 'flag' | 'env' | 'profile' | 'default';
  /** The global flags a printed hint repeats so it runs as printed (`--site-url …`, `--profile …`). */
  hintFlags: string;
  session: Session;
  api: ApiClient;
  openBrowser(url: string): Promise<void>;
  verbose: boolean;
  json: boolean;
  /** The folder the command runs in: a project's mkt.json is looked for from here up. */
  cwd: string;
}

export interface DepsInput {
  env: Record<string, string | undefined>;
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  profile?: string;
  siteUrl?: string;
  verbose?: boolean;
  json?: boolean;
  /** --jq: the filter every JSON output goes through. */
  jq?: JqFilter;
  clock?: Clock;
  cwd?: string;
}

/** Builds the dependency object from flags and the environment (flag > environment > profile > default). */
export async function createDeps(input: DepsInput): Promise<Deps> {
  const { env } = input;
  const json = input.json ?? false;
  const out = new Output({ stdout: input.stdout, stderr: input.stderr, env, json, jq: input.jq });
  const clock = input.clock ?? systemClock;
  const profile = input.profile || env.MKT_PROFILE || 'default';
  if (!/^[A-Za-z0-9_.-]+$/.test(profile)) {
    throw new UsageError(`Profile names use letters, digits, ".", "_" and "-"; "${profile}" does not.`);
  }
  const timeout = env.MKT_HTTP_TIMEOUT;
  if (timeout !== undefined && timeout !== '' && !(Number(timeout) > 0 && Number.isFinite(Number(timeout)))) {
    throw new UsageError(`MKT_HTTP_TIMEOUT must be a number of seconds above 0, not "${timeout}".`, {
      code: 'invalid_timeout',
    });
  }
  const dir = configDir(env);
  await checkConfigDir(dir, (message) => out.warn(message));
  const config = new ConfigStore(dir);
  let siteUrl: string;
  let siteUrlSource: Deps['siteUrlSource'];
  if (input.siteUrl) [siteUrl, siteUrlSource] = [input.siteUrl, 'flag'];
  else if (env.MKT_SITE_URL) [siteUrl, siteUrlSource] = [env.MKT_SITE_URL, 'env'];
  else {
    const stored = await config.get(profile, 'site-url');
    [siteUrl, siteUrlSource] = stored ? [stored, 'profile'] : [DEFAULT_SITE_URL, 'default'];
  }
  siteUrl = checkedSiteUrl(siteUrl, ` (from ${siteUrlSource})`);
  const hintFlags = [
    siteUrlSource === 'flag' ? `--site-url ${siteUrl}` : '',
    input.profile ? `--profile ${profile}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  const credentials = new AutoStore({
    configDir: dir,
    forced: env.MKT_CREDENTIAL_STORE,
    busAddress: env.DBUS_SESSION_BUS_ADDRESS,
    notice: (message) => out.noticeOnce(message),
  });
  const session: Session = new Session({
    env,
    store: credentials,
    profile,
    clock,
    siteUrl,
    siteOverridden: siteUrlSource === 'flag' || siteUrlSource === 'env',
    configDir: dir,
    tokenRequest: async (body, keep) =>
      (await import('./auth/token-endpoint.js')).tokenRequest({ api, config, hintFlags }, body, keep),
  });
  const verbose = input.verbose ?? false;
  const api: ApiClient = new ApiClient({
    siteUrl,
    auth: session,
    env,
    clock,
    userAgent: userAgent(),
    log: verbose ? (line) => out.info(out.dim(line)) : undefined,
    hintFlags,
    siteSource: describeSiteSource(siteUrlSource, profile),
    notSignedIn: async () => (await import('./auth/status.js')).notLoggedIn(deps),
  });
  const deps: Deps = {
    env,
    get stdin() {
      return input.stdin;
    },
    out,
    clock,
    profile,
    configDir: dir,
    config,
    credentials,
    siteUrl,
    siteUrlSource,
    hintFlags,
    session,
    api,
    // The opener (and node:child_process) loads only when a browser is opened.
    openBrowser: async (url) => (await import('./platform/browser.js')).openBrowser(url, env),
    verbose,
    json,
    cwd: input.cwd ?? process.cwd(),
  };
  return deps;
}

/** Where the site URL came from, as messages name it. */
export function describeSiteSource(source: Deps['siteUrlSource'], profile: string): string {
  return {
    flag: '--site-url',
    env: 'MKT_SITE_URL',
    profile: `profile "${profile}"`,
    default: 'the default, the local sandbox',
  }[source];
}
