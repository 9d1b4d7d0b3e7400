import { mkdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { SandboxCore } from './core.js';
import { Deliveries } from './deliveries.js';
import { sweepCodes } from './oauth.js';
import { RateLimiter } from './rate-limit.js';
import { seedStore } from './seed.js';
import { handleRequest } from './server.js';
import { Store } from './store.js';

/** The port `mkt sandbox start` listens on unless told otherwise. */
export const DEFAULT_SANDBOX_PORT = 7878;

/** How to run the sandbox; only `dataDir` is required. */
export interface SandboxOptions {
  /** State persists here (created if missing). */
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
}

/** The seeded developer, app, keys, plans and test users (the same after a restart without reset). */
export interface SandboxSeed {
  siteUrl: string;
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

/** A running sandbox; `close()` stops it, ends relay streams and saves the state. */
export interface Sandbox {
  siteUrl: string;
  port: number;
  seed: SandboxSeed;
  close(): Promise<void>;
}

function describeSeed(core: SandboxCore): SandboxSeed {
  const { store } = core;
  const ids = store.seed;
  const developer = store.users.get(ids.developer_id);
  const app = store.apps.get(ids.app_id);
  const testKey = store.keys.get(ids.test_key_id);
  const liveKey = store.keys.get(ids.live_key_id);
  if (!developer || !app || !testKey || !liveKey) {
    throw new Error(`The sandbox state in ${store.dataDir} lost its seeded records; start it with reset.`);
  }
  return {
    siteUrl: core.siteUrl,
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
    plans: (store.planIdsByApp.get(app.id) ?? []).flatMap((id) => {
      const p = store.plan(app.id, id);
      return p ? [{ id: p.id, name: p.name, kind: p.kind }] : [];
    }),
    users: ids.user_ids.flatMap((id) => {
      const u = store.users.get(id);
      const s = store.subscription(app.id, id);
      return u && s ? [{ id: u.id, email: u.email, name: u.name, plan: s.plan, status: s.status }] : [];
    }),
  };
}

/** Starts the local marketplace on loopback, loading (or seeding) the state in `dataDir`. */
export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  const host = options.host ?? '127.0.0.1';
  if (options.reset) {
    // Only the sandbox's own files: dataDir may be a folder the user also keeps other things in.
    await rm(join(options.dataDir, 'state.json'), { force: true });
    await rm(join(options.dataDir, 'deliveries'), { recursive: true, force: true });
  }
  await mkdir(options.dataDir, { recursive: true });

  const store = new Store(options.dataDir, now, (e) => log(`state write failed: ${String(e)}`));
  const core: SandboxCore = {
    store,
    deliveries: new Deliveries({
      dataDir: options.dataDir,
      now,
      backoffMs: options.deliveryBackoffMs ?? [1000, 2000, 4000, 8000, 16000],
      timeoutMs: options.deliveryTimeoutMs ?? 10_000,
      log,
    }),
    rateLimiter: new RateLimiter(now),
    now,
    siteUrl: '',
    codes: new Map(),
    spentRefreshTokens: new Map(),
  };
  if (!store.load()) seedStore(core);
  await store.flush();

  // The handler is in place before listening, so no request can arrive unanswered.
  const server = createServer((req, res) => {
    const started = performance.now();
    res.on('finish', () => {
      const path = (req.url ?? '').split('?')[0];
      log(`${req.method} ${path} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`);
    });
    void handleRequest(core, req, res);
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_SANDBOX_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const siteUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  core.siteUrl = siteUrl;
  const sweeper = setInterval(() => sweepCodes(core), 60_000);
  sweeper.unref();

  let closing: Promise<void> | undefined;
  return {
    siteUrl,
    port,
    seed: describeSeed(core),
    close() {
      closing ??= (async () => {
        clearInterval(sweeper);
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        await core.deliveries.close();
        server.closeIdleConnections();
        const grace = setTimeout(() => server.closeAllConnections(), 2_000);
        await stopped;
        clearTimeout(grace);
        await store.flush();
      })();
      return closing;
    },
  };
}
