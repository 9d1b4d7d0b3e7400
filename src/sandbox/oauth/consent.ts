import { Hono } from 'hono';
import type { IncomingMessage } from 'node:http';
import type { SandboxCore } from '../kernel/core.js';
import { decodeUtf8, mediaType, readRawBody } from '../kernel/http/body.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { z } from 'zod';
import { createRoute, openapi } from '../kernel/http/declare.js';
import { pageAnswer, pageErrors, PUBLIC, redirectAnswer } from '../kernel/http/responses.js';
import { SCOPE_LIST } from '../kernel/shapes.js';
import { sameOriginForm } from '../kernel/http/guards.js';
import { page } from '../kernel/http/layout.js';
import { pageError, SandboxApiError } from '../kernel/http/problem.js';
import { makeRoom } from '../kernel/http/party-bound.js';
import { randomId, secretsEqual } from '../kernel/ids.js';
import { userOfApp } from '../kernel/model.js';
import type { AppRecord, Scope } from '../kernel/storage/records.js';
import { consentPage, type ConsentUser } from './consent-page.js';
import { parseAuthorizationRequest, single, type AuthorizationRequest } from './request.js';

/** Authorization codes expire 60 s after they are issued (docs/DECISIONS.md §2). */
export const CODE_TTL_MS = 60_000;
/** A consent page must be answered within ten minutes. */
const REQUEST_TTL_MS = 600_000;
/** Consent pages kept at once, and per app (past it, that app's oldest is forgotten). */
const MAX_REQUESTS = 10_000;
const MAX_REQUESTS_PER_APP = 100;
const CONSENT_USER_LIMIT = 200;

/** Who may sign in to `app`: its test users (with their subscription), then its developer. */
export function consentUsers(core: SandboxCore, app: AppRecord): ConsentUser[] {
  const users: ConsentUser[] = [];
  for (const id of core.ledger.userIds(app.id) ?? []) {
    const user = core.ledger.user(id);
    if (user) users.push({ user, role: 'test user', subscription: core.ledger.subscription(app.id, id) });
    if (users.length >= CONSENT_USER_LIMIT) break;
  }
  const developer = core.ledger.user(app.owner_id);
  if (developer) users.push({ user: developer, role: 'developer' });
  return users;
}

/** `GET /oauth/authorize`: stores the validated request and shows the consent page (or the error). */
function showConsent(core: SandboxCore, url: URL) {
  const parsed = parseAuthorizationRequest(core, url.searchParams);
  const now = core.now();
  makeRoom(core.authRequests, parsed.app.id, {
    partyOf: (r) => r.app.id,
    gone: (r) => r.expiresAt <= now,
    perParty: MAX_REQUESTS_PER_APP,
    total: MAX_REQUESTS,
    what: 'open consent pages',
  });
  const request: AuthorizationRequest = {
    ...parsed,
    id: randomId('areq', 16),
    csrf: randomId('csrf', 24),
    expiresAt: now + REQUEST_TTL_MS,
  };
  core.authRequests.set(request.id, request);
  // Managing apps is the developer's business: preselected when apps:write is asked for.
  const { users, selected } = orderedUsers(core, request.app, request.scopes);
  const hidden = { request_id: request.id, csrf_token: request.csrf };
  return consentPage({ app: request.app, scopes: request.scopes, users, selected, hidden });
}

export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const raw = await readRawBody(req);
  if (mediaType(req) !== 'application/x-www-form-urlencoded') {
    throw pageError('invalid_request', 'Send the form as application/x-www-form-urlencoded.');
  }
  const text = decodeUtf8(raw);
  if (text === undefined) throw pageError('invalid_request', 'The form is not valid UTF-8.');
  return new URLSearchParams(text);
}

/**
 * The user the person chose on a consent form, who must be able to sign in to `app`; a test user is
 * never granted `apps:write` (managing apps is the developer's alone, as in the simulator).
 */
export function chosenUser(core: SandboxCore, app: AppRecord, scopes: Scope[], form: URLSearchParams) {
  const userId = single(form, 'user_id');
  if (userId === null) throw pageError('invalid_request', 'Choose a user to sign in as.');
  let user;
  try {
    user = userOfApp(core, app, userId);
  } catch {
    throw pageError('invalid_request', `The user "${userId}" cannot sign in to ${app.name}.`);
  }
  if (user.id !== app.owner_id && scopes.includes('apps:write')) {
    throw pageError(
      'access_denied',
      `A test user cannot be granted "apps:write"; sign in as the developer of ${app.name} instead.`,
      403,
    );
  }
  return user;
}

/** The users of the consent page, the one to preselect first (the developer when `apps:write` is asked for). */
export function orderedUsers(core: SandboxCore, app: AppRecord, scopes: Scope[]) {
  const users = consentUsers(core, app);
  const selected = scopes.includes('apps:write') ? app.owner_id : users[0]?.user.id;
  return {
    selected,
    users: [...users.filter((u) => u.user.id === selected), ...users.filter((u) => u.user.id !== selected)],
  };
}

/** The stored request the form names, once: a wrong or missing anti-CSRF token issues nothing. */
function takeRequest(core: SandboxCore, form: URLSearchParams): AuthorizationRequest {
  const id = single(form, 'request_id');
  const request = id === null ? undefined : core.authRequests.get(id);
  if (!request || request.expiresAt <= core.now()) {
    throw pageError(
      'invalid_request',
      'This consent page is unknown, already answered or expired; start the sign-in again.',
    );
  }
  const csrf = single(form, 'csrf_token');
  if (csrf === null || !secretsEqual(csrf, request.csrf)) {
    throw pageError('access_denied', 'The consent form lacks its anti-CSRF token; nothing was issued.', 403);
  }
  core.authRequests.delete(request.id);
  return request;
}

/**
 * `POST /oauth/authorize`: approve (302 with `code` and `state`) or deny (302 with
 * `error=access_denied`). Everything but the person's choice comes from the stored request.
 */
async function submitConsent(core: SandboxCore, req: IncomingMessage): Promise<string> {
  {
    const form = await readForm(req);
    const decision = single(form, 'decision');
    if (decision !== 'approve' && decision !== 'deny') {
      throw pageError('invalid_request', 'The "decision" must be "approve" or "deny".');
    }
    const request = takeRequest(core, form);
    const target = new URL(request.redirectUri);
    if (decision === 'deny') {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The user denied the request.');
    } else {
      const user = chosenUser(core, request.app, request.scopes, form);
      const code = randomId('code', 20);
      core.codes.set(code, {
        code,
        app_id: request.app.id,
        client_id: request.app.client_id,
        redirect_uri: request.redirectUri,
        user_id: user.id,
        scopes: request.scopes,
        code_challenge: request.codeChallenge,
        expires_at: core.now() + CODE_TTL_MS,
        used: false,
        family: randomId('fam', 8),
      });
      core.deliveries.emitInBackground(request.app, 'user.authorized', {
        user_id: user.id,
        app_id: request.app.id,
        scopes: request.scopes,
      });
      await core.ledger.sync();
      target.searchParams.set('code', code);
    }
    if (request.state !== null) target.searchParams.set('state', request.state);
    return target.toString();
  }
}

const consentPageRoute = createRoute({
  method: 'get',
  path: '/oauth/authorize',
  summary: 'The consent page (Authorization Code with PKCE; RFC 6749 §4.1.1, RFC 7636)',
  security: PUBLIC,
  request: {
    query: z.object({
      client_id: z.string().regex(/^cid_[A-Za-z0-9_-]{1,60}$/),
      redirect_uri: z.string(),
      response_type: z.literal('code'),
      scope: z
        .string()
        .meta({ description: 'Space-separated scopes (identity:read when absent)', pattern: SCOPE_LIST })
        .optional(),
      state: z.string().max(512).optional(),
      code_challenge: z
        .string()
        .regex(/^[A-Za-z0-9_-]{43}$/)
        .optional(),
      code_challenge_method: z.literal('S256').optional(),
    }),
  },
  responses: { 200: pageAnswer('The consent page'), ...pageErrors(400, 429) },
});

const consentDecision = createRoute({
  method: 'post',
  path: '/oauth/authorize',
  summary: 'The decision on the consent page (a form of this sandbox only)',
  security: PUBLIC,
  request: {
    body: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: z.object({
            request_id: z.string(),
            csrf_token: z.string(),
            decision: z.enum(['approve', 'deny']),
            user_id: z.string().optional(),
          }),
        },
      },
    },
  },
  responses: {
    302: redirectAnswer('The decision, redirected to the app with `code` (or `error`) and `state`'),
    ...pageErrors(400, 403, 413),
  },
});

/** The consent page and its form (pages: failures are shown, never redirected). */
export const consentRoutes = new Hono<SandboxEnv>();

openapi(
  consentRoutes,
  consentPageRoute,
  (c) => page(c, 200, showConsent(c.get('core'), new URL(c.req.url))),
  {
    ownRequest: true,
  },
);

openapi(
  consentRoutes,
  consentDecision,
  async (c) => {
    try {
      const location = await submitConsent(c.get('core'), c.env.incoming);
      return c.body(null, 302, { location, 'cache-control': 'no-store' });
    } catch (error) {
      // Every failure of the consent flow is shown on a page.
      if (error instanceof SandboxApiError)
        throw new SandboxApiError(error.status, error.code, error.message, {}, 'page');
      throw error;
    }
  },
  { ownRequest: true, before: [sameOriginForm] },
);

/** Removes codes and consent requests past their expiry (called periodically). */
export function sweepCodes(core: SandboxCore): void {
  const now = core.now();
  for (const [code, record] of core.codes) if (record.expires_at <= now) core.codes.delete(code);
  for (const [id, r] of core.authRequests) if (r.expiresAt <= now) core.authRequests.delete(id);
}
