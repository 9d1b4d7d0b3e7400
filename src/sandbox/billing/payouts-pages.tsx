import { Hono } from 'hono';
import { z } from 'zod';
import { createRoute, openapi } from '../kernel/http/declare.js';
import { pageAnswer, pageErrors, PUBLIC } from '../kernel/http/responses.js';
import { decodeUtf8, mediaType, readRawBody } from '../kernel/http/body.js';
import type { SandboxEnv } from '../kernel/http/env.js';
import { sameOriginForm } from '../kernel/http/guards.js';
import { Layout, page } from '../kernel/http/layout.js';
import { pageError } from '../kernel/http/problem.js';
import { Life } from './life.js';

const SPENT =
  'This link was used, has expired, or the form is not its own; ask for a new one: mkt apps payments link';

/**
 * The simulated payment processor's connect page (docs/PROTOCOL.md, Money): Approve links a test
 * account to the app. Single use; the form carries the link's one-time anti-CSRF token.
 */
const linkPath = z.strictObject({ link_id: z.string() });

const connectPage = createRoute({
  method: 'get',
  path: '/payouts/connect/{link_id}',
  summary: "The simulated processor's connect page",
  security: PUBLIC,
  request: { params: linkPath },
  responses: { 200: pageAnswer("The simulated processor's connect page"), ...pageErrors(400, 404) },
});

const connectDecision = createRoute({
  method: 'post',
  path: '/payouts/connect/{link_id}',
  summary: 'The decision on the connect page (a form of this sandbox only); the link is spent',
  security: PUBLIC,
  request: {
    params: linkPath,
    body: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: z.object({ csrf_token: z.string(), decision: z.enum(['approve', 'deny']) }),
        },
      },
    },
  },
  responses: {
    200: pageAnswer('The decision, shown: linked, or nothing changed'),
    ...pageErrors(400, 403, 413),
  },
});

export const payoutsPages = new Hono<SandboxEnv>();

openapi(payoutsPages, connectPage, (c) => {
  const { ledger, services } = c.get('core');
  const life = services.get(Life);
  const link = life.connectLink(c.req.param('link_id'));
  const app = link && ledger.app(link.app_id);
  if (!link || !app) throw pageError('link_expired', SPENT, 404);
  return page(
    c,
    200,
    <Layout title="Connect a payment account">
      <h1>Connect a payment account</h1>
      <p>
        The sandbox plays the payment processor. Approve to link a test account to <strong>{app.name}</strong>{' '}
        (<code>{app.id}</code>), so that it can sell paid plans.
      </p>
      <form method="post" action={`/payouts/connect/${link.id}`}>
        <input type="hidden" name="csrf_token" value={link.csrf} />
        <button name="decision" value="approve">
          Approve
        </button>
        <button name="decision" value="deny">
          Deny
        </button>
      </form>
    </Layout>,
  );
});

openapi(
  payoutsPages,
  connectDecision,
  async (c) => {
    const req = c.env.incoming;
    const raw = await readRawBody(req);
    if (mediaType(req) !== 'application/x-www-form-urlencoded') {
      throw pageError('invalid_request', 'Send the form as application/x-www-form-urlencoded.');
    }
    const form = new URLSearchParams(decodeUtf8(raw) ?? '');
    const { ledger, services } = c.get('core');
    const life = services.get(Life);
    const link = life.takeConnectLink(c.req.param('link_id'), form.get('csrf_token') ?? '');
    const app = link && ledger.app(link.app_id);
    if (!link || !app) throw pageError('link_expired', SPENT, 403);
    if (form.get('decision') !== 'approve') {
      return page(
        c,
        200,
        <Layout title="Not linked">
          <h1>Not linked</h1>
          <p>Nothing changed for {app.name}.</p>
        </Layout>,
      );
    }
    const account = life.linkPayouts(app.id);
    await ledger.sync();
    return page(
      c,
      200,
      <Layout title="Linked">
        <h1>Linked</h1>
        <p>
          <strong>{app.name}</strong> now sells paid plans; payouts go to <code id="account">{account}</code>.
          You can close this page.
        </p>
      </Layout>,
    );
  },
  { ownRequest: true, before: [sameOriginForm] },
);
