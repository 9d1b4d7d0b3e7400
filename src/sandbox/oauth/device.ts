import { Hono } from 'hono';
import { z } from 'zod';
import { randomInt } from 'node:crypto';
import type { SandboxCore } from '../kernel/core.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { createRoute, openapi } from '../kernel/http/declare.js';
import {
  CLIENT_SECURITY,
  errorAnswer,
  oauthErrorAnswer,
  openJson,
  pageAnswer,
  pageErrors,
  PUBLIC,
} from '../kernel/http/responses.js';
import { sameOriginForm } from '../kernel/http/guards.js';
import { page } from '../kernel/http/layout.js';
import { NO_STORE, noStoreError, oauthError, pageError, SandboxApiError } from '../kernel/http/problem.js';
import { randomId, secretsEqual } from '../kernel/ids.js';
import { issueTokens, type TokenResponse } from '../kernel/model.js';
import { SCOPE_LIST } from '../kernel/shapes.js';
import { SCOPES, type AppRecord, type Scope } from '../kernel/storage/records.js';
import { authenticateClient } from './client-auth.js';
import { chosenUser, orderedUsers, readForm } from './consent.js';
import { consentPage } from './consent-page.js';
import { codeEntryPage, deviceDonePage } from './device-page.js';
import { single } from './request.js';
import { GuessLimit, makeRoom } from '../kernel/http/party-bound.js';
import { readTokenRequest } from './token-request.js';

/** RFC 8628 §3.2: how long a device code lives, and the least time between two polls. */
export const DEVICE_CODE_TTL_S = 600;
export const DEVICE_POLL_INTERVAL_S = 5;
/** RFC 8628 §3.5: each `slow_down` adds five seconds to the interval. */
const SLOW_DOWN_S = 5;
/** Pending device sign-ins kept at once, and per app (past it, that app's oldest is forgotten). */
const MAX_GRANTS = 10_000;
const MAX_GRANTS_PER_APP = 100;
/** User codes: eight letters without vowels (no words, nothing to misread), shown as XXXX-XXXX. */
const USER_CODE_LETTERS = 'BCDFGHJKLMNPQRSTVWXZ';

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

interface DeviceGrant {
  deviceCode: string;
  userCode: string;
  app: AppRecord;
  scopes: Scope[];
  expiresAt: number;
  /** Seconds the client must wait between polls (grows with each `slow_down`). */
  interval: number;
  lastPollAt: number | null;
  /** Anti-CSRF token of the page that shows this code. */
  csrf: string;
  decision: { userId: string } | 'denied' | null;
}

/** Device sign-ins in progress, per sandbox (memory only: they live ten minutes). */
const grantsOf = new WeakMap<SandboxCore, Map<string, DeviceGrant>>();
/** Wrong user codes per client address, per sandbox (RFC 8628 §5.1). */
const guessesOf = new WeakMap<SandboxCore, GuessLimit>();

/** An expired code is kept as long again, so that its device hears `expired_token`, not `invalid_grant`. */
const forgotten = (core: SandboxCore) => (g: DeviceGrant) =>
  g.expiresAt <= core.now() - DEVICE_CODE_TTL_S * 1000;

function grants(core: SandboxCore): Map<string, DeviceGrant> {
  let map = grantsOf.get(core);
  if (!map) grantsOf.set(core, (map = new Map()));
  const gone = forgotten(core);
  for (const [code, g] of map) {
    if (!gone(g)) break; // in order of expiry: every code lives as long
    map.delete(code);
  }
  return map;
}

function guesses(core: SandboxCore): GuessLimit {
  let limit = guessesOf.get(core);
  if (!limit) guessesOf.set(core, (limit = new GuessLimit(core.now)));
  return limit;
}

/** "bcdf-ghjk", "BCDFGHJK " and "BCDF GHJK" all name BCDF-GHJK. */
function normalizeUserCode(input: string): string {
  const letters = input.toUpperCase().replace(/[^A-Z]/g, '');
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : letters;
}

function newUserCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += USER_CODE_LETTERS[randomInt(USER_CODE_LETTERS.length)];
  return normalizeUserCode(code);
}

/**
 * The pending grant a user code names; each wrong code counts against the caller's address, and an
 * address past its limit is refused (429, RFC 8628 §5.1) before any lookup.
 */
function byUserCode(core: SandboxCore, raw: string, address: string): DeviceGrant | undefined {
  guesses(core).check(address);
  const code = normalizeUserCode(raw);
  for (const g of grants(core).values())
    if (g.userCode === code && g.expiresAt > core.now() && g.decision === null) return g;
  guesses(core).miss(address);
  return undefined;
}

function parseScopes(raw: string | undefined): Scope[] {
  const scopes = [...new Set((raw ?? 'identity:read').split(' ').filter((s) => s !== ''))];
  for (const s of scopes)
    if (!(SCOPES as readonly string[]).includes(s))
      throw oauthError(400, 'invalid_scope', `Unknown scope "${s}". Known scopes: ${SCOPES.join(', ')}.`);
  if (!scopes.length) throw oauthError(400, 'invalid_scope', 'The parameter "scope" is empty.');
  return scopes as Scope[];
}

/** `POST /api/oauth/device_authorization` (RFC 8628 §3.1–3.2): a device code and the code the person types. */
async function authorizeDevice(core: SandboxCore, incoming: Parameters<typeof readTokenRequest>[0]) {
  const fields = await readTokenRequest(incoming);
  const app = authenticateClient(core, incoming, fields);
  const scopes = parseScopes(fields.get('scope'));
  const map = grants(core);
  makeRoom(map, app.id, {
    partyOf: (g) => g.app.id,
    gone: forgotten(core),
    perParty: MAX_GRANTS_PER_APP,
    total: MAX_GRANTS,
    what: 'pending device sign-ins',
  });
  let userCode = newUserCode();
  while ([...map.values()].some((g) => g.userCode === userCode)) userCode = newUserCode();
  const grant: DeviceGrant = {
    deviceCode: randomId('dc', 32),
    userCode,
    app,
    scopes,
    expiresAt: core.now() + DEVICE_CODE_TTL_S * 1000,
    interval: DEVICE_POLL_INTERVAL_S,
    lastPollAt: null,
    csrf: randomId('csrf', 24),
    decision: null,
  };
  map.set(grant.deviceCode, grant);
  const verify = `${core.siteUrl}/oauth/device`;
  return {
    device_code: grant.deviceCode,
    user_code: userCode,
    verification_uri: verify,
    verification_uri_complete: `${verify}?user_code=${userCode}`,
    expires_in: DEVICE_CODE_TTL_S,
    interval: grant.interval,
  };
}

/**
 * `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4–3.5): the tokens once
 * the person approved; else `authorization_pending`, `slow_down` (a poll sooner than the interval,
 * which grows by 5 s), `access_denied` or `expired_token`. The device code is spent by its answer.
 */
export function exchangeDeviceCode(
  core: SandboxCore,
  app: AppRecord,
  fields: Map<string, string>,
): TokenResponse {
  const code = fields.get('device_code');
  if (!code) throw oauthError(400, 'invalid_request', 'The parameter "device_code" is missing.');
  const map = grants(core);
  const grant = map.get(code);
  if (!grant || grant.app.id !== app.id)
    throw oauthError(400, 'invalid_grant', 'The device code is not valid.');
  const now = core.now();
  if (grant.expiresAt <= now) {
    map.delete(code);
    throw oauthError(400, 'expired_token', 'The device code has expired; start the sign-in again.');
  }
  if (grant.decision === 'denied') {
    map.delete(code);
    throw oauthError(400, 'access_denied', 'The user denied the request.');
  }
  if (grant.decision === null) {
    const tooSoon = grant.lastPollAt !== null && now - grant.lastPollAt < grant.interval * 1000;
    grant.lastPollAt = now;
    if (tooSoon) {
      grant.interval += SLOW_DOWN_S;
      throw oauthError(400, 'slow_down', `Poll at most every ${grant.interval} s.`);
    }
    throw oauthError(400, 'authorization_pending', 'The user has not answered yet.');
  }
  map.delete(code);
  return issueTokens(core, app, grant.decision.userId, grant.scopes, randomId('fam', 8));
}

/** The page for a user code: the consent page with the code to compare, or the form to type it. */
function showDevicePage(core: SandboxCore, raw: string | null, address: string) {
  if (raw === null) return codeEntryPage({});
  const grant = byUserCode(core, raw, address);
  if (!grant)
    return codeEntryPage({
      value: raw,
      error:
        'This code is unknown, already used or expired. Check it, or start the sign-in on your device again.',
    });
  const { users, selected } = orderedUsers(core, grant.app, grant.scopes);
  return consentPage({
    app: grant.app,
    scopes: grant.scopes,
    users,
    selected,
    hidden: { user_code: grant.userCode, csrf_token: grant.csrf },
    action: '/oauth/device',
    userCode: grant.userCode,
  });
}

/** `POST /oauth/device`: approve or deny the code the form names, once, with its anti-CSRF token. */
async function submitDevice(
  core: SandboxCore,
  form: URLSearchParams,
  address: string,
): Promise<'approved' | 'denied'> {
  const decision = single(form, 'decision');
  if (decision !== 'approve' && decision !== 'deny')
    throw pageError('invalid_request', 'The "decision" must be "approve" or "deny".');
  const grant = byUserCode(core, single(form, 'user_code') ?? '', address);
  if (!grant)
    throw pageError(
      'invalid_request',
      'This code is unknown, already answered or expired; start the sign-in again.',
    );
  const csrf = single(form, 'csrf_token');
  if (csrf === null || !secretsEqual(csrf, grant.csrf))
    throw pageError('access_denied', 'The form lacks its anti-CSRF token; nothing was issued.', 403);
  if (decision === 'deny') {
    grant.decision = 'denied';
    return 'denied';
  }
  const user = chosenUser(core, grant.app, grant.scopes, form);
  grant.decision = { userId: user.id };
  core.deliveries.emitInBackground(grant.app, 'user.authorized', {
    user_id: user.id,
    app_id: grant.app.id,
    scopes: grant.scopes,
  });
  await core.ledger.sync();
  return 'approved';
}

/** RFC 8628 §3.1: the client and the scopes; parameters it does not know are ignored. */
const DeviceRequest = z
  .looseObject({
    client_id: z.string().min(1),
    client_secret: z.string().min(1).optional(),
    scope: z
      .string()
      .meta({ description: 'Space-separated scopes (identity:read when absent)', pattern: SCOPE_LIST })
      .optional(),
  })
  .meta({ id: 'DeviceAuthorizationRequest' });

const deviceAuthorization = createRoute({
  method: 'post',
  path: '/api/oauth/device_authorization',
  summary: 'A device code and the code the person types (RFC 8628 §3.1–3.2)',
  security: CLIENT_SECURITY,
  request: {
    body: {
      required: true,
      content: {
        'application/json': { schema: DeviceRequest },
        'application/x-www-form-urlencoded': { schema: DeviceRequest },
      },
    },
  },
  responses: {
    200: openJson(
      'A device code (RFC 8628 §3.2)',
      z.strictObject({
        device_code: z.string(),
        user_code: z.string().regex(/^[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}$/),
        verification_uri: z.string(),
        verification_uri_complete: z.string(),
        expires_in: z.int().min(1),
        interval: z.int().min(1),
      }),
      true,
    ),
    400: oauthErrorAnswer(
      400,
      'Refused (RFC 6749 §5.2): a parameter is missing or invalid, or a scope unknown',
    ),
    401: oauthErrorAnswer(401, 'Client authentication failed'),
    413: oauthErrorAnswer(413, 'The body is larger than 1 MiB'),
    415: oauthErrorAnswer(415, 'The body is neither JSON nor form-encoded'),
    // The app's pending device codes are bounded (not an OAuth error: the API's).
    429: errorAnswer(429),
  },
});

const devicePage = createRoute({
  method: 'get',
  path: '/oauth/device',
  summary: 'The device verification page: the person types the code shown on the device',
  security: PUBLIC,
  request: { query: z.object({ user_code: z.string().optional() }) },
  responses: { 200: pageAnswer('The device verification page'), ...pageErrors(400, 429) },
});

const deviceDecision = createRoute({
  method: 'post',
  path: '/oauth/device',
  summary: 'The decision on the verification page (a form of this sandbox only)',
  security: PUBLIC,
  request: {
    body: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: z.object({
            user_code: z.string(),
            csrf_token: z.string(),
            decision: z.enum(['approve', 'deny']),
            user_id: z.string().optional(),
          }),
        },
      },
    },
  },
  responses: { 200: pageAnswer('The decision, shown'), ...pageErrors(400, 403, 413, 429) },
});

/** The device authorization endpoint and its verification page (`/oauth/device`). */
export const deviceRoutes = new Hono<SandboxEnv>();

// It reads its JSON or form body itself: its refusals are RFC 6749's.
openapi(
  deviceRoutes,
  deviceAuthorization,
  async (c) => {
    try {
      return c.json(await authorizeDevice(c.get('core'), c.env.incoming), 200, NO_STORE);
    } catch (error) {
      throw noStoreError(error);
    }
  },
  { ownRequest: true },
);

openapi(
  deviceRoutes,
  devicePage,
  (c) => {
    const params = new URL(c.req.url).searchParams;
    const address = c.env.incoming.socket.remoteAddress ?? '';
    return page(c, 200, showDevicePage(c.get('core'), single(params, 'user_code'), address));
  },
  { ownRequest: true },
);

openapi(
  deviceRoutes,
  deviceDecision,
  async (c) => {
    try {
      const address = c.env.incoming.socket.remoteAddress ?? '';
      const outcome = await submitDevice(c.get('core'), await readForm(c.env.incoming), address);
      return page(c, 200, deviceDonePage(outcome));
    } catch (error) {
      if (error instanceof SandboxApiError)
        throw new SandboxApiError(error.status, error.code, error.message, {}, 'page');
      throw error;
    }
  },
  { ownRequest: true, before: [sameOriginForm] },
);
