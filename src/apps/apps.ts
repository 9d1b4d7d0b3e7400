import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { accounts } from '../credentials/accounts.js';
import { confirmAction } from '../platform/prompts.js';
import { checkUrl, optionalHttpUrl } from '../urls.js';
import { APP_ID } from '../wire.js';
import { resolveAppId } from './resolve.js';

/** An application as the API answers it (unknown extra fields are kept). */
export interface App {
  id: string;
  name: string;
  client_id: string;
  redirect_uris: string[];
  webhook_url: string | null;
  embed_url: string | null;
  created_at: string;
  /** Only in the answer to create and to a client-secret rotation. */
  client_secret?: string;
  [field: string]: unknown;
}

/** What `apps create` and `apps update` may set; `null` clears a URL. */
export interface AppInput {
  name?: string;
  redirectUris?: string[];
  webhookUrl?: string | null;
  embedUrl?: string | null;
}

type AppDeps = Pick<Deps, 'api' | 'config' | 'profile' | 'credentials' | 'session' | 'siteUrl'>;

const appPath = (id: string) => `/apps/${encodeURIComponent(id)}`;

/** The request body for create/update, from already checked input. */
function body(input: AppInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (input.name !== undefined) out.name = input.name;
  if (input.redirectUris !== undefined) out.redirect_uris = input.redirectUris;
  if (input.webhookUrl !== undefined) out.webhook_url = input.webhookUrl;
  if (input.embedUrl !== undefined) out.embed_url = input.embedUrl;
  return out;
}

/** Checks flags into an AppInput before any request is made. */
export function checkAppInput(flags: {
  name?: string;
  'redirect-uri'?: string[];
  'webhook-url'?: string;
  'embed-url'?: string;
}): AppInput {
  if (flags.name !== undefined && !flags.name.trim()) {
    throw new UsageError('--name must not be empty.', { code: 'invalid_name' });
  }
  return {
    name: flags.name?.trim(),
    redirectUris: flags['redirect-uri']?.map((v) => (checkUrl(v, 'redirect', '--redirect-uri'), v)),
    webhookUrl:
      flags['webhook-url'] === undefined
        ? undefined
        : optionalHttpUrl(flags['webhook-url'], 'webhook', '--webhook-url'),
    embedUrl:
      flags['embed-url'] === undefined
        ? undefined
        : optionalHttpUrl(flags['embed-url'], 'embed', '--embed-url'),
  };
}

/** Every app the caller owns (all pages). */
export function listApps(deps: Pick<Deps, 'api'>): Promise<App[]> {
  return deps.api.list<App>('/apps');
}

/** One app: --app or the profile's default. */
export async function getApp(deps: AppDeps, input: { app?: string }): Promise<App> {
  const id = await resolveAppId(deps, input);
  return (await deps.api.get<App>(appPath(id))).data;
}

/** Creates an app and stores its client secret for `mkt login`; the answer carries the secret once. */
export async function createApp(
  deps: AppDeps,
  input: AppInput,
): Promise<{ app: App; stored: boolean; storeError?: string }> {
  const app = (await deps.api.post<App>('/apps', body(input))).data;
  return {
    app,
    ...(await storeSecret(deps, accounts.clientSecret(deps.siteUrl, app.client_id), app.client_secret)),
  };
}

/** Changes an app's name, redirect URIs, webhook or embed URL. */
export async function updateApp(deps: AppDeps, input: AppInput & { app?: string }): Promise<App> {
  const fields = body(input);
  if (Object.keys(fields).length === 0) {
    throw new UsageError('Nothing to change: pass --name, --redirect-uri, --webhook-url or --embed-url.', {
      code: 'nothing_to_update',
    });
  }
  const id = await resolveAppId(deps, input);
  return (await deps.api.patch<App>(appPath(id), fields)).data;
}

/** Deletes an app once confirmed; forgets it as the profile's default when it was, and says so. */
export async function deleteApp(
  deps: AppDeps & Pick<Deps, 'out' | 'stdin'>,
  input: { app?: string; yes?: boolean },
): Promise<{ id: string; wasDefault: boolean }> {
  const id = await resolveAppId(deps, input);
  await confirmAction(
    deps,
    `Delete app ${id} with its plans and API keys (integrations using it stop working)?`,
    { yes: input.yes },
  );
  await deps.api.delete(appPath(id));
  const wasDefault = (await deps.config.get(deps.profile, 'app')) === id;
  if (wasDefault) await deps.config.unset(deps.profile, 'app');
  return { id, wasDefault };
}

/** Makes an app the profile's default after checking that it exists and the caller may see it. */
export async function useApp(deps: AppDeps, input: { id: string }): Promise<App> {
  const { id } = input;
  if (!APP_ID.test(id)) {
    throw new UsageError(`"${id}" is not an app id (app_…).`, {
      code: 'invalid_app',
      hints: ['mkt apps list'],
    });
  }
  const app = (await deps.api.get<App>(appPath(id))).data;
  await deps.config.set(deps.profile, 'app', app.id ?? id);
  return app;
}

/** The result of a rotation: the server's answer, the new secret, and where it was stored. */
export interface Rotation {
  kind: 'client' | 'webhook';
  appId: string;
  secret: string;
  response: Record<string, unknown>;
  stored: boolean;
  storeError?: string;
}

/** What each rotatable secret is called. */
export const SECRET_NAMES = { client: 'client secret', webhook: 'webhook signing secret' } as const;

/** Rotates the client or webhook secret of an app once confirmed, and stores the new one in the credential store. */
export async function rotateSecret(
  deps: AppDeps & Pick<Deps, 'out' | 'stdin'>,
  input: { app?: string; kind: 'client' | 'webhook'; yes?: boolean },
): Promise<Rotation> {
  const { kind } = input;
  const id = await resolveAppId(deps, input);
  const breaks = kind === 'client' ? 'sign-ins using the old one' : 'receivers verifying with the old one';
  await confirmAction(deps, `Rotate the ${SECRET_NAMES[kind]} of ${id} (this breaks ${breaks})?`, {
    yes: input.yes,
  });
  if (kind === 'client') {
    const app = (await deps.api.post<App>(`${appPath(id)}/client-secret`, {})).data;
    const secret = String(app.client_secret ?? '');
    const account = accounts.clientSecret(deps.siteUrl, app.client_id);
    return { kind, appId: id, secret, response: app, ...(await storeSecret(deps, account, secret)) };
  }
  const res = (await deps.api.post<{ webhook_secret: string }>(`${appPath(id)}/webhook-secret`, {})).data;
  const secret = String(res.webhook_secret ?? '');
  const account = accounts.webhookSecret(deps.profile, id);
  return { kind, appId: id, secret, response: res, ...(await storeSecret(deps, account, secret)) };
}

/** Keeps a secret; a failing store is reported, not thrown, since the secret is still shown once. */
async function storeSecret(
  deps: Pick<Deps, 'credentials'>,
  account: string,
  secret: string | undefined,
): Promise<{ stored: boolean; storeError?: string }> {
  if (!secret) return { stored: false, storeError: 'the server sent no secret' };
  try {
    await deps.credentials.set(account, secret);
    return { stored: true };
  } catch (err) {
    return { stored: false, storeError: (err as Error).message };
  }
}
