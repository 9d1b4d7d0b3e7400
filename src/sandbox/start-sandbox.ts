import { DEFAULT_SANDBOX_PORT } from '../wire.js';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { DatabaseSync } from 'node:sqlite';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ConsoleRoom } from './console/room.js';
import { newRequestId } from './logs/request-log.js';
import { Services, type SandboxCore } from './kernel/core.js';
import { Life } from './billing/life.js';
import { SqlBillingStore } from './billing/sql-store.js';
import { RateLimiter } from './kernel/http/rate-limit.js';
import { getRequestListener } from '@hono/node-server';
import { sandboxApp } from './app.js';
import { sweepCodes } from './oauth/consent.js';
import { writeHolder } from './kernel/storage/database.js';
import { openLedger } from './kernel/storage/open-ledger.js';
import { seedLedger } from './kernel/storage/seed.js';
import { seedFromFixtures } from './fixtures/seed.js';
import type { Fixtures } from './fixtures/schema.js';
import { Deliveries } from './kernel/deliveries/dispatcher.js';
import { Relay } from './kernel/deliveries/fanout.js';
import { Streams } from './kernel/streams.js';
import { DELIVERY_TIMEOUT_MS } from '../wire/delivery.js';

export { FolderInUseError } from './kernel/storage/database.js';
export { DamagedDataError } from './kernel/storage/folder-check.js';
// What the CLI's sandbox commands take from this bundle besides a running sandbox (one entry: the
// CLI's bundle never holds sandbox code; esbuild.config.js, sandbox-apart).
export { parseFixtures, FixturesError } from './fixtures/read.js';
export { exportFolder } from './fixtures/export.js';

/** How to run the sandbox; only `dataDir` is required. */
export interface SandboxOptions {
  /** State persists here (one SQLite database): created 0700 if missing, tightened to 0700 if others may write it, files 0600. */
  dataDir: string;
  /** Default 7878; 0 picks any free port. */
  port?: number;
  /** Default '127.0.0.1' (never 0.0.0.0 by default). */
  host?: string;
  /** Wipe the state in dataDir and seed fresh. */
  reset?: boolean;
  /** Clock in milliseconds (tests pass a fake one for code expiry and rate windows). */
  now?: () => number;
  /** Waits between webhook attempts; default [1000, 2000, 4000, 8000, 16000]. */
  deliveryBackoffMs?: number[];
  /** How long one webhook attempt may take; default 10000. */
  deliveryTimeoutMs?: number;
  /** Receives one line per request and per delivery attempt; default: nothing. */
  log?: (line: string) => void;
  /** Seeds an empty folder from a fixtures file (parsed: src/sandbox/fixtures/read.ts) instead of the default seed. */
  fixtures?: { fixtures: Fixtures; digest: string };
  /** Receives what the developer should read even when requests are not logged (an import, a tightened folder); default: `log`. */
  notice?: (line: string) => void;
  /**
   * MKT_SANDBOX_CHECK_ANSWERS: check every answer against the OpenAPI document and append each mismatch
   * to a file: `1` for answers-outside-openapi.jsonl in the data folder, or a file's absolute path (`0`: off).
   */
  checkAnswers?: string;
  /**
   * MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT: the document to check them against, as `sandboxDocument()`
   * writes it (a test run writes it once: test/support/answers-document.ts), instead of the one this
   * process would make from its router at its first answer (~0.2 s of CPU in each process).
   */
  checkAnswersDocument?: string;
}

/** The seeded developer, app, keys, plans and test users (the same after a restart without reset). */
export interface SandboxSeed {
  developer: { id: string; email: string; name: string };
  app: {
    id: string;
    name: string;
    client_id: string;
    client_secret: string;
    redirect_uris: string[];
    webhook_secret: string;
  };
  test_key: string;
  live_key: string;
  plans: Array<{ id: string; name: string; kind: string }>;
  users: Array<{ id: string; email: string; name: string; plan: string; status: string }>;
}

/** A running sandbox; `close()` stops it and ends relay streams (every acknowledged change is already on disk). */
export interface Sandbox {
  siteUrl: string;
  port: number;
  seed: SandboxSeed;
  /** A fresh one-time link to the developer console for the seeded developer (5 minutes, single use). */
  consoleLink(): Promise<{ url: string; expires_at: string }>;
  close(): Promise<void>;
}

function describeSeed(core: SandboxCore): SandboxSeed {
  const store = core.ledger;
  const ids = store.seed;
  const developer = store.user(ids.developer_id);
  const app = store.app(ids.app_id);
  const testKey = store.key(ids.test_key_id);
  const liveKey = store.key(ids.live_key_id);
  if (!developer || !app || !testKey || !liveKey) {
    throw new Error(`The sandbox state in ${store.dataDir} lost its seeded records; start it with reset.`);
  }
  return {
    developer: { id: developer.id, email: developer.email, name: developer.name },
    app: {
      id: app.id,
      name: app.name,
      client_id: app.client_id,
      client_secret: app.client_secret,
      redirect_uris: [...app.redirect_uris],
      webhook_secret: app.webhook_secret,
    },
    test_key: testKey.key,
    live_key: liveKey.key,
    plans: store.planIds(app.id).flatMap((id) => {
      const p = store.plan(app.id, id);
      return p ? [{ id: p.id, name: p.name, kind: p.kind }] : [];
    }),
    users: ids.user_ids.flatMap((id) => {
      const u = store.user(id);
      const s = store.subscription(app.id, id);
      return u && s ? [{ id: u.id, email: u.email, name: u.name, plan: s.plan, status: s.status }] : [];
    }),
  };
}

/**
 * Starts the local marketplace on loopback, loading (or seeding) the state in `dataDir`. The port is
 * taken first: a start that cannot listen leaves the data folder as it was (none is made).
 */
export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  const host = options.host ?? '127.0.0.1';
  let handle: (req: IncomingMessage, res: ServerResponse) => void = () => {};
  const server = createServer((req, res) => handle(req, res));
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_SANDBOX_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Until the state is loaded, a request waits (no request arrives unanswered).
  const waiting: Array<() => void> = [];
  handle = (req, res) => waiting.push(() => handle(req, res));
  let core: SandboxCore;
  try {
    core = await openCore(options, now, log);
  } catch (error) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  }
  core.port = (server.address() as AddressInfo).port;
  core.siteUrl = `http://${host.includes(':') ? `[${host}]` : host}:${core.port}`;
  const { ledger } = core;
  const app = sandboxApp(core);
  const check = options.checkAnswers === '0' ? undefined : options.checkAnswers;
  const listener = getRequestListener(
    check ? await checkedFetch(app, options.dataDir, check, options.checkAnswersDocument) : app.fetch,
  );
  handle = (req, res) => {
    res.setHeader('x-request-id', newRequestId());
    if (options.log !== undefined) {
      const started = performance.now();
      res.on('finish', () => {
        const path = (req.url ?? '').split('?')[0];
        log(`${req.method} ${path} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`);
      });
    }
    afterAdvance(core, req, () => void listener(req, res));
  };
  for (const go of waiting.splice(0)) go();
  writeHolder(options.dataDir, core.siteUrl);
  const sweeper = setInterval(() => sweepCodes(core), 60_000);
  sweeper.unref();

  let closing: Promise<void> | undefined;
  return {
    siteUrl: core.siteUrl,
    port: core.port,
    seed: describeSeed(core),
    consoleLink() {
      const developer = core.ledger.user(core.ledger.seed.developer_id);
      if (!developer) throw new Error('The seeded developer is gone; start the sandbox with reset.');
      return core.services.get(ConsoleRoom).link({
        developerId: developer.id,
        appId: core.ledger.seed.app_id,
        label: `${developer.name} <${developer.email}>`,
      });
    },
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        core.services.get(Life).stop();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        core.deliveries.close();
        core.streams.closeAll();
        server.closeIdleConnections();
        const grace = setTimeout(() => server.closeAllConnections(), 2_000);
        await stopped;
        clearTimeout(grace);
        await ledger.close();
      })();
      return closing;
    },
  };
}

/** The app's `fetch` with each answer checked against its document (MKT_SANDBOX_CHECK_ANSWERS). */
async function checkedFetch(
  app: ReturnType<typeof sandboxApp>,
  dataDir: string,
  check: string,
  saved: string | undefined,
) {
  const [{ checkAnswers, savedDocument }, { openApiDocument }] = await Promise.all([
    import('./openapi/check-answers.js'),
    import('./openapi/document.js'),
  ]);
  const file = check === '1' ? join(dataDir, 'answers-outside-openapi.jsonl') : check;
  return checkAnswers(app.fetch, file, saved ? () => savedDocument(saved) : () => openApiDocument(app));
}

/**
 * While the business clock is being advanced (one long transaction), reads are answered from the
 * last committed state and every other request (a write) waits until the advance has ended.
 */
function afterAdvance(core: SandboxCore, req: IncomingMessage, go: () => void): void {
  const busy = core.ledger.busy;
  if (busy === undefined || req.method === 'GET' || req.method === 'HEAD') go();
  else void busy.then(() => afterAdvance(core, req, go));
}

/** Opens the data folder and makes everything the handlers use. */
async function openCore(options: SandboxOptions, now: () => number, log: (line: string) => void) {
  const { ledger, fresh } = await openLedger(options.dataDir, {
    reset: options.reset,
    log: options.notice ?? log,
    onCommitError: (e) => log(`state write failed: ${String(e)}`),
  });
  const streams = new Streams();
  ledger.onCredentialGone = (gone) => streams.gone(gone);
  const relay = new Relay((appId) => ledger.history(appId), streams);
  const services = new Services();
  const core: SandboxCore = {
    ledger,
    relay,
    streams,
    deliveries: new Deliveries(ledger, relay, {
      now,
      backoffMs: options.deliveryBackoffMs ?? [1000, 2000, 4000, 8000, 16000],
      timeoutMs: options.deliveryTimeoutMs ?? DELIVERY_TIMEOUT_MS,
      log,
    }),
    rateLimiter: new RateLimiter(now),
    now,
    siteUrl: '',
    port: 0,
    authRequests: new Map(),
    codes: new Map(),
    services,
    onApiCall: (p) => {
      if (p.kind === 'token') life.countCall(p.app.id, p.user.id);
    },
    onAnswered: (request) => consoleRoom.recordRequest(request, (id) => ledger.app(id)?.owner_id),
  };
  const life = new Life(core, new SqlBillingStore(ledger));
  const consoleRoom = new ConsoleRoom({
    // Its reads follow the ledger's (the last committed state while the clock is being advanced).
    db: { prepare: (text: string) => ledger.readDb.prepare(text) } as DatabaseSync,
    now,
    siteUrl: () => core.siteUrl,
    port: () => core.port,
    saveToken: async (v) => {
      ledger.commit({ op: 'token', v: { ...v, scopes: [...v.scopes] } });
      await ledger.sync();
    },
  });
  services.add(life).add(consoleRoom);
  try {
    if (fresh && options.fixtures) seedFromFixtures(core, options.fixtures.fixtures, options.fixtures.digest);
    else if (fresh) seedLedger(core);
    // Deliveries still owed from an earlier run are scheduled first, so that those the catch-up
    // below creates are attempted once, by emit, and not a second time by resume.
    core.deliveries.resume();
    // Transitions that fell due while the sandbox was stopped happen now, in order.
    life.start();
    await ledger.sync();
  } catch (error) {
    life.stop();
    core.deliveries.close();
    await ledger.close();
    throw error;
  }
  return core;
}
