import { ApiError, AuthError, type MktError } from './errors.js';

/** What a refusal is built from: the server's answer, the credential used and the request. */
export interface RefusalInput {
  /** The error code and message the server gave (its one sentence). */
  code: string;
  message: string;
  /** The scope a `WWW-Authenticate` challenge names, if any. */
  challengeScope?: string;
  credential: { kind: 'token' | 'test_key' | 'live_key'; source: string } | null;
  /** The request URL's path (`/api/v1/apps/app_1/plans`, `…/entitlements`). */
  path: string;
  /** The user a request named (`?user_id=`), if any. */
  user?: string;
  /** The global flags a hint repeats (` --profile staging`), or ''. */
  flags: string;
}

/**
 * A 403 as one true sentence (docs/CLI.md, Refusals): the server's own sentence, never another glued
 * to it, and hints that work for this credential: never the failing command again, never a step
 * this kind of credential cannot take.
 */
export function refusal(input: RefusalInput): MktError {
  const { credential, flags, path } = input;
  const message = sentence(input.message);
  const code = input.code || 'forbidden';
  const key = credential?.kind === 'test_key' || credential?.kind === 'live_key';
  const scope =
    input.challengeScope ??
    (/scope/i.test(message) ? /"?\b([a-z][\w-]*:[a-z][\w-]*)\b"?/i.exec(message)?.[1] : undefined);
  if (/\/simulator\/authorize$/.test(path) && credential?.kind !== 'live_key') {
    // The simulator authorizes test users only, with app scopes: the developer signs in for real.
    return new AuthError(code, `Not allowed: ${message}`, {
      hints: [`mkt login${flags} --scope apps:write   (as the developer, in the browser)`],
    });
  }
  if (scope && credential?.kind === 'token') {
    const login = `mkt login${flags} --scope ${scope}`;
    return new AuthError('insufficient_scope', `Not allowed: ${message}`, {
      hints: [
        credential.source === 'env'
          ? `unset MKT_ACCESS_TOKEN; ${login}`
          : `${login}   (signs in again with ${scope} added${scope === 'apps:write' ? ", as the app's developer" : ''})`,
      ],
    });
  }
  if (/\/entitlements$/.test(path) && credential?.kind === 'token') {
    // A sign-in reads its own user's entitlement only; another user's is read with the app's key.
    return new AuthError(code, `Not allowed: ${message}`, {
      hints: [
        `mkt entitlements${flags}   (your own entitlement)`,
        `mkt keys create --mode test${flags}   (then MKT_API_KEY=<that key> mkt entitlements --user ${input.user ?? 'usr_…'})`,
      ],
    });
  }
  if (key && /\/apps\/?$/.test(path)) {
    // Creating apps is the developer's: a key cannot, whatever its app.
    const login = `mkt login${flags} --scope apps:write`;
    return new AuthError(code, `Not allowed: ${message}`, {
      hints: [
        credential.source === 'env'
          ? `unset MKT_API_KEY; ${login}   (as the developer, in place of the key)`
          : `${login}   (as the developer, in place of the key)`,
      ],
    });
  }
  if (/\/simulator\//.test(path) && credential?.kind === 'live_key') {
    return new AuthError(code, `Not allowed: ${message}`, {
      hints: [`mkt keys list${flags}   (the app's test key, for the simulator)`],
    });
  }
  if (/\bbelongs? to|do not own|not your|another app/i.test(message)) {
    return new AuthError(code, `Not allowed: ${message}`, {
      hints: key
        ? [`mkt apps get${flags}   (the app of this API key)`]
        : [`mkt apps list${flags}   (the apps you can manage)`, `mkt apps use${flags} APP_ID`],
    });
  }
  return new AuthError(code, `Not allowed: ${message}`, { hints: [`mkt auth status${flags}`] });
}

/** The server's text as one sentence: trimmed, with its final full stop. */
function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** What a request named, for hints: its app, user and plan (from its path, query or JSON body). */
export interface RequestNames {
  app?: string;
  user?: string;
  plan?: string;
}

/** The app, user and plan a request named: path `/apps/{id}`, `/simulator/users/{id}`, query or body. */
export function requestNames(url: URL | undefined, sent: unknown): RequestNames {
  const body = (typeof sent === 'object' && sent !== null ? sent : {}) as Record<string, unknown>;
  const data = (typeof body.data === 'object' && body.data !== null ? body.data : {}) as Record<
    string,
    unknown
  >;
  const text = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
  const path = url?.pathname ?? '';
  return {
    app:
      /\/apps\/(app_[\w-]+)/.exec(path)?.[1] ??
      text(body.app_id) ??
      url?.searchParams.get('app_id') ??
      undefined,
    user: /\/simulator\/users\/(usr_\w+)/.exec(path)?.[1] ?? text(body.user_id) ?? text(data.user_id),
    plan: text(body.plan) ?? text(data.plan),
  };
}

/**
 * What to do next after the marketplace refused a change for the state things are in (a 402, 404 or
 * 409 of the simulator and the life of subscriptions): the server's sentence says why, these hints
 * (built here, never by the server) say what this user can run. Empty for a code mkt does not know.
 */
export function stateHints(code: string, message: string, names: RequestNames, flags: string): string[] {
  const app = names.app ? ` --app ${names.app}` : '';
  const user = names.user ?? 'USER';
  switch (code) {
    case 'no_test_users':
      return [`mkt simulator users create --plan PLAN${app}${flags}   (a plan of mkt plans list${app})`];
    case 'payouts_not_linked':
      return [`mkt apps payments link${app}${flags}`];
    case 'payment_declined':
      return names.user
        ? [`mkt simulator users update ${names.user} --payment succeeds${app}${flags}`]
        : [`mkt simulator users create --plan ${names.plan ?? 'PLAN'} --payment succeeds${app}${flags}`];
    case 'already_subscribed':
    case 'same_plan':
    case 'not_cancellable':
    case 'plan_archived':
      return [`mkt plans list${app}${flags}   (then: mkt simulator users update ${user} --plan PLAN${app})`];
    case 'no_subscription':
      return [
        `mkt trigger subscription.created${names.user ? ` --user ${names.user}` : ''}${app}${flags}   (subscribes first)`,
      ];
    case 'not_found':
      if (/\btest user\b/i.test(message)) return [`mkt simulator users list${app}${flags}`];
      if (/\bno plans\b/i.test(message)) return [`mkt plans create --help`];
      if (/\bplan/i.test(message)) return [`mkt plans list${app}${flags}`];
      return [];
    default:
      return [];
  }
}

/**
 * A 404 for an id the user typed (a placeholder such as app_123 copied from an example): the
 * command that lists the ids there are.
 */
export function notFound(
  status: number,
  code: string,
  message: string,
  path: string,
  flags: string,
): MktError {
  const app = /\/apps\/(app_[\w-]+)/.exec(path)?.[1];
  const appFlag = app ? ` --app ${app}` : '';
  const hint = /\/apps\/[^/]+\/plans\/[^/]+$/.test(path)
    ? `mkt plans list${appFlag}${flags}`
    : /\/apps\/[^/]+\/keys\/[^/]+$/.test(path)
      ? `mkt keys list${appFlag}${flags}`
      : /\/apps\/[^/]+(\/[^/]+)?$/.test(path)
        ? `mkt apps list${flags}`
        : undefined;
  return new ApiError(status, code || `http_${status}`, message, { hints: hint ? [hint] : [] });
}
