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
    if (input.fetch !== false) {
      const path = `/apps/${encodeURIComponent(input.appId)}/webhook-secret`;
      const res = await deps.api.get<{ webhook_secret?: unknown }>(path).catch((err: unknown) => {
        // A marketplace without this endpoint (or a credential without access) still leaves a way.
        if (!(err instanceof ApiError || err instanceof AuthError)) throw err;
        throw new MktError(
          err.code,
          `Cannot read the webhook signing secret of ${input.appId} (GET ${path}): ${err.message}`,
          err.exitCode,
          { hints: ['MKT_WEBHOOK_SECRET=whsec_… mkt webhooks listen …', ...err.hints] },
        );
      });
      if (typeof res.data?.webhook_secret === 'string' && res.data.webhook_secret) {
        return { secret: res.data.webhook_secret, source: 'marketplace' };
      }
    }
  }
  throw new UsageError('No webhook signing secret: pass --secret-env NAME or set MKT_WEBHOOK_SECRET.', {
    code: 'secret_missing',
    hints: [
      'export MKT_WEBHOOK_SECRET=whsec_…',
      'mkt webhooks listen --app APP_ID   (reads it from the marketplace)',
    ],
  });
}
