import type { Deps } from '../deps.js';
import { accounts } from '../credentials/accounts.js';
import { ApiError, AuthError, MktError, UsageError } from '../errors.js';

/** The webhook signing secret and where it came from. */
export interface WebhookSecret {
  secret: string;
  /** Where it came from, as said to the user: `$NAME`, `credential store (app_…)`, `marketplace`. */
  source: string;
  /** The app whose stored secret it is (or was fetched for), when it came from there. */
  appId?: string;
}

type SecretDeps = Pick<Deps, 'env' | 'credentials' | 'profile' | 'api' | 'config' | 'session'>;

/**
 * The one way to find the secret to verify with (`webhooks listen`, `verify`, `resend`): the variable
 * named by --secret-env, else MKT_WEBHOOK_SECRET, else the secret stored for the app (--app, else the
 * API key's own app, else the profile's default app: src/apps/resolve.ts), else (unless `fetch` is
 * false) the app's secret read from the marketplace, which is then stored for the next time. Never
 * from argv.
 */
export async function resolveWebhookSecret(
  deps: SecretDeps,
  input: { app?: string; secretEnv?: string; fetch?: boolean },
): Promise<WebhookSecret> {
  if (input.secretEnv) {
    const value = deps.env[input.secretEnv];
    if (!value) {
      throw new UsageError(`The variable ${input.secretEnv} (from --secret-env) is not set or empty.`, {
        code: 'secret_missing',
        hints: [`export ${input.secretEnv}=whsec_…`],
      });
    }
    return { secret: value, source: `$${input.secretEnv}` };
  }
  if (deps.env.MKT_WEBHOOK_SECRET)
    return { secret: deps.env.MKT_WEBHOOK_SECRET, source: '$MKT_WEBHOOK_SECRET' };
  const { optionalAppId } = await import('../apps/resolve.js');
  const appId = await optionalAppId(deps, { app: input.app });
  if (appId) {
    const stored = await deps.credentials.get(accounts.webhookSecret(deps.profile, appId));
    if (stored) return { secret: stored, source: `the credential store (${appId})`, appId };
    if (input.fetch !== false) {
      const secret = await fetchWebhookSecret(deps, appId);
      await keepWebhookSecret(deps, appId, secret);
      return { secret, source: 'marketplace', appId };
    }
  }
  const app = appId ?? 'APP_ID';
  throw new UsageError(
    appId
      ? `No webhook signing secret: none is stored for ${appId} (profile "${deps.profile}"), --secret-env is not given and MKT_WEBHOOK_SECRET is not set.`
      : 'No webhook signing secret: no app is chosen (--app), --secret-env is not given and MKT_WEBHOOK_SECRET is not set.',
    {
      code: 'secret_missing',
      hints: [
        'export MKT_WEBHOOK_SECRET=whsec_…',
        `mkt webhooks listen --app ${app} --print-secret   (reads it from the marketplace and stores it)`,
      ],
    },
  );
}

/** Stores the app's secret for the next verification; a store that fails loses nothing but that. */
export async function keepWebhookSecret(
  deps: Pick<Deps, 'credentials' | 'profile'>,
  appId: string,
  secret: string,
): Promise<void> {
  await deps.credentials.set(accounts.webhookSecret(deps.profile, appId), secret).catch(() => undefined);
}

/** The app's current signing secret, read from the marketplace. */
export async function fetchWebhookSecret(deps: Pick<Deps, 'api'>, appId: string): Promise<string> {
  const path = `/apps/${encodeURIComponent(appId)}/webhook-secret`;
  const res = await deps.api.get<{ webhook_secret?: unknown }>(path).catch((err: unknown) => {
    // A marketplace without this endpoint (or a credential without access) still leaves a way.
    if (!(err instanceof ApiError || err instanceof AuthError)) throw err;
    throw new MktError(
      err.code,
      `Cannot read the webhook signing secret of ${appId} (GET ${path}): ${err.message}`,
      err.exitCode,
      { hints: ['MKT_WEBHOOK_SECRET=whsec_… mkt webhooks listen …', ...err.hints] },
    );
  });
  const secret = res.data?.webhook_secret;
  if (typeof secret === 'string' && secret) return secret;
  throw new MktError(
    'secret_missing',
    `The marketplace gave no webhook signing secret for ${appId} (GET ${path}).`,
    1,
    {
      hints: ['export MKT_WEBHOOK_SECRET=whsec_…'],
    },
  );
}

/** True when the secret was given explicitly (an environment variable): it is never replaced. */
export const isExplicitSecret = (source: string) => source.startsWith('$');
