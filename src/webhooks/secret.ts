import type { Deps } from '../deps.js';
import { accounts } from '../credentials/accounts.js';
import { ApiError, AuthError, MktError, UsageError } from '../errors.js';

/** The webhook signing secret and where it came from. */
export interface WebhookSecret {
  secret: string;
  source: string;
}

/**
 * The secret to verify with: the variable named by --secret-env, else MKT_WEBHOOK_SECRET, else the
 * credential store, else (with an app) the marketplace. Never from argv.
 */
export async function resolveWebhookSecret(
  deps: Pick<Deps, 'env' | 'credentials' | 'profile' | 'api'>,
  input: { appId?: string; secretEnv?: string; fetch?: boolean },
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
  if (input.appId) {
    const stored = await deps.credentials.get(accounts.webhookSecret(deps.profile, input.appId));
    if (stored) return { secret: stored, source: 'credential store' };
    if (input.fetch !== false)
      return { secret: await fetchWebhookSecret(deps, input.appId), source: 'marketplace' };
  }
  throw new UsageError('No webhook signing secret: pass --secret-env NAME or set MKT_WEBHOOK_SECRET.', {
    code: 'secret_missing',
    hints: [
      'export MKT_WEBHOOK_SECRET=whsec_…',
      'mkt webhooks listen --app APP_ID   (reads it from the marketplace)',
    ],
  });
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
