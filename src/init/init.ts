// `mkt init`: registers an app on the site mkt talks to and writes a small project that signs users
// in, checks their entitlement, verifies webhooks and serves the embedded page (templates/<name>/).
// Secrets go only into the project's .env (0600, git-ignored); mkt.json (committed) names the app
// and tells `mkt dev` how to run it; mkt.fixtures.json (committed) seeds the sandbox the project's
// tests run against in CI (`mkt sandbox exec --seed mkt.fixtures.json -- npm test`).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { Deps } from '../deps.js';
import { MktError, UsageError } from '../errors.js';
import { createApp } from '../apps/apps.js';
import { fetchWebhookSecret, keepWebhookSecret } from '../webhooks/secret.js';
import { createTestUser } from '../simulator/simulator.js';
import { createPlan, planCreateBody } from '../plans/plans.js';
import { isLoopback } from '../urls.js';
import { INSTALL, PROJECT_FILE, type ProjectFile } from './project.js';
import { checkProjectFolder, writeProject } from './write.js';

export const TEMPLATES = {
  node: {
    summary: 'Node.js (20.12 or later) and Hono',
    port: 3000,
    command: ['node', '--watch', 'src/server.js'],
  },
  python: { summary: 'Python and Flask', port: 5000, command: ['python3', 'app.py'] },
} as const;
export type TemplateName = keyof typeof TEMPLATES;
export { PROJECT_FILE, type ProjectFile };

export interface InitInput {
  dir: string;
  name: string;
  template: TemplateName;
  port?: number;
}

export interface InitResult {
  dir: string;
  app_id: string;
  client_id: string;
  template: TemplateName;
  app_url: string;
  files: string[];
  /** A test user on the free plan, on a local sandbox (for the consent page). */
  test_user_id: string | null;
  next: string[];
}

type InitDeps = Pick<Deps, 'api' | 'config' | 'profile' | 'credentials' | 'session' | 'siteUrl'>;

/** A folder name beside `dir` that does not exist yet (`my-app-2`, `my-app-3`…). */
function freeName(dir: string): string {
  const base = basename(dir);
  for (let n = 2; ; n++) if (!existsSync(join(dirname(dir), `${base}-${n}`))) return `${base}-${n}`;
}

/** Checks the input before anything is registered: a usable name, a new or empty folder of this user's. */
export async function checkInit(input: InitInput): Promise<Required<InitInput>> {
  const name = input.name.trim();
  // eslint-disable-next-line no-control-regex -- a name with control characters would break the files it is written into
  if (!name || /[\u0000-\u001f\u007f-\u009f]/.test(name))
    throw new UsageError('--name must be a non-empty line of text.');
  if (!(input.template in TEMPLATES)) {
    throw new UsageError(
      `Unknown template "${input.template}". Templates: ${Object.keys(TEMPLATES).join(', ')}.`,
    );
  }
  const dir = resolve(input.dir);
  const port = input.port ?? TEMPLATES[input.template].port;
  checkProjectFolder(dir);
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    const other = freeName(dir);
    const flags = `--name ${JSON.stringify(name)} --template ${input.template}${input.port ? ` --port ${port}` : ''}`;
    throw new UsageError(`${input.dir} is not empty; give mkt init a new or empty folder.`, {
      code: 'folder_not_empty',
      hints: [
        `mkt init ${join(relative(process.cwd(), dirname(dir)) || '.', other).replace(/^\.\//, '')} ${flags}`,
      ],
    });
  }
  return { dir, name, template: input.template, port };
}

/** Registers the app, then writes the project; a project that cannot be written leaves no app behind. */
export async function initApp(deps: InitDeps, raw: InitInput): Promise<InitResult> {
  const input = await checkInit(raw);
  const appUrl = `http://localhost:${input.port}`;
  const redirectUri = `${appUrl}/callback`;
  const { app } = await createApp(deps, {
    name: input.name,
    redirectUris: [redirectUri],
    embedUrl: `${appUrl}/embed`,
  });
  try {
    const webhookSecret = await fetchWebhookSecret(deps, app.id);
    const env = {
      APP_NAME: input.name,
      MKT_SITE_URL: deps.siteUrl,
      MKT_APP_ID: app.id,
      MKT_CLIENT_ID: app.client_id,
      MKT_CLIENT_SECRET: String(app.client_secret ?? ''),
      MKT_WEBHOOK_SECRET: webhookSecret,
      // Signs the app's sessions: kept here, so a restart (or a reload on edit) signs nobody out.
      SESSION_SECRET: randomBytes(32).toString('base64url'),
      PAID_FEATURE: 'pro',
    };
    const project: ProjectFile = {
      app_id: app.id,
      template: input.template,
      port: input.port,
      command: [...TEMPLATES[input.template].command],
    };
    const fixtures = {
      apps: [
        {
          name: input.name,
          redirect_uris: [redirectUri],
          embed_url: `${appUrl}/embed`,
          plans: [{ id: 'free', name: 'Free', kind: 'free' }],
          users: [{ name: 'Test User', plan: 'free' }],
        },
      ],
    };
    // Every value is checked before anything is written: a site's answer cannot add lines to .env.
    const files = await writeProject(input, { env, project, fixtures });
    await keepWebhookSecret(deps, app.id, webhookSecret);
    // On a local sandbox, a free plan and a test user to sign in as, so the app works at once.
    let testUser: string | null = null;
    if (isLoopback(new URL(deps.siteUrl))) {
      await createPlan(deps, { app: app.id, body: planCreateBody({ name: 'Free', kind: 'free' }) });
      testUser = (await createTestUser(deps, { app: app.id, plan: 'free', name: 'Test User' })).id;
    }
    const cd = relative(process.cwd(), input.dir) || '.';
    return {
      dir: input.dir,
      app_id: app.id,
      client_id: app.client_id,
      template: input.template,
      app_url: appUrl,
      files,
      test_user_id: testUser,
      next: [
        ...(cd === '.' ? [] : [`cd ${cd}`]),
        INSTALL[input.template],
        'mkt dev',
        `mkt apps payments link   (then a paid plan: mkt plans create --name Pro --kind monthly --price 9.99 --currency USD --feature pro)`,
      ],
    };
  } catch (err) {
    // Nothing half-done: the app registered for a project that was not written goes again.
    const removed = await deps.api.delete(`/apps/${encodeURIComponent(app.id)}`).then(
      () => true,
      () => false,
    );
    if (err instanceof MktError && !removed)
      err.hints.push(`mkt apps delete ${app.id} --yes   (the app registered for this project)`);
    throw err;
  }
}
