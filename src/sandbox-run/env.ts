import type { SandboxSeed } from '../sandbox/start-sandbox.js';

/**
 * The variables a test suite gets from `mkt sandbox exec` (and `mkt sandbox env`), in this order.
 * MKT_SITE_URL and MKT_API_KEY are also what `mkt` itself reads, so `mkt` inside the suite talks to
 * this sandbox. Secrets travel in the environment, never in arguments (docs/CLI.md, sandbox exec).
 */
export const SANDBOX_ENV_DOC: ReadonlyArray<[string, string]> = [
  ['MKT_SITE_URL', "the sandbox's address, http://127.0.0.1:PORT"],
  ['MKT_API_KEY', "the app's test API key (test_…)"],
  ['MKT_APP_ID', 'the app (app_…)'],
  ['MKT_CLIENT_ID', "the app's OAuth client id"],
  ['MKT_CLIENT_SECRET', "the app's OAuth client secret"],
  ['MKT_WEBHOOK_SECRET', "the app's webhook signing secret (whsec_…)"],
  ['MKT_TEST_USER_IDS', "the app's test users, space-separated (usr_…)"],
  ['MKT_DEVELOPER_ID', 'the developer who owns the app (usr_…)'],
  ['MKT_SANDBOX_DATA_DIR', "the sandbox's data folder"],
];

/** The environment of a running sandbox, as `exec` gives it and `env` prints it. */
export function sandboxEnv(info: {
  site_url: string;
  data_dir: string;
  seed: SandboxSeed;
}): Record<string, string> {
  const { seed } = info;
  return {
    MKT_SITE_URL: info.site_url,
    MKT_API_KEY: seed.test_key,
    MKT_APP_ID: seed.app.id,
    MKT_CLIENT_ID: seed.app.client_id,
    MKT_CLIENT_SECRET: seed.app.client_secret,
    MKT_WEBHOOK_SECRET: seed.app.webhook_secret,
    MKT_TEST_USER_IDS: seed.users.map((u) => u.id).join(' '),
    MKT_DEVELOPER_ID: seed.developer.id,
    MKT_SANDBOX_DATA_DIR: info.data_dir,
  };
}

/** `export NAME=value` lines: the values door (src/platform/file-values.ts). */
export { exportLines } from '../platform/file-values.js';

/** The help text's list of the variables. */
export const envHelp = (): string => SANDBOX_ENV_DOC.map(([k, v]) => `  ${k.padEnd(22)} ${v}`).join('\n');
