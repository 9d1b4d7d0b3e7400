// `mkt init`: registers an app on the site mkt talks to and writes a small project that signs users
// in, checks their entitlement, verifies webhooks and serves the embedded page (templates/<name>/).
// Secrets go only into the project's .env (0600, git-ignored); mkt.json (committed) tells `mkt dev`
// how to run the app.
import { existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import type { Deps } from '../deps.js';
import { UsageError } from '../errors.js';
import { createApp } from '../apps/apps.js';
import { fetchWebhookSecret, keepWebhookSecret } from '../webhooks/secret.js';
import { createTestUser } from '../simulator/simulator.js';
import { createPlan, planCreateBody } from '../plans/plans.js';
import { isLoopback } from '../urls.js';

export const TEMPLATES = {
  node: { summary: 'Node.js, TypeScript and Hono', port: 3000, command: ['npm', 'run', 'dev'] },
  python: { summary: 'Python and Flask', port: 5000, command: ['python3', 'app.py'] },
} as const;
export type TemplateName = keyof typeof TEMPLATES;

/** What `mkt dev` reads from a project's mkt.json. */
export interface ProjectFile {
  app_id: string;
  template: TemplateName;
  port: number;
  command: string[];
}
export const PROJECT_FILE = 'mkt.json';

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

/** The folder the templates ship in: beside dist/ (the bundle) or two above build/init/ (tsc's output). */
function templatesRoot(): string {
  for (const up of ['../templates/', '../../templates/']) {
    const url = new URL(up, import.meta.url);
    if (existsSync(url)) return url.pathname;
  }
  throw new Error('mkt init: the templates folder is missing from this installation.');
}

/** Checks the input before anything is registered: a usable name, an empty or new folder. */
export async function checkInit(input: InitInput): Promise<Required<InitInput>> {
  const name = input.name.trim();
  // eslint-disable-next-line no-control-regex -- a name with control characters would break the files it is written into
  if (!name || /[\u0000-\u001f\u007f]/.test(name))
    throw new UsageError('--name must be a non-empty line of text.');
  if (!(input.template in TEMPLATES)) {
    throw new UsageError(
      `Unknown template "${input.template}". Templates: ${Object.keys(TEMPLATES).join(', ')}.`,
    );
  }
  const dir = resolve(input.dir);
  if (existsSync(dir) && (await readdir(dir)).length > 0) {
    throw new UsageError(`${input.dir} is not empty; give mkt init a new or empty folder.`, {
      code: 'folder_not_empty',
      hints: [`mkt init ${basename(dir)}-app --template ${input.template}`],
    });
  }
  return { dir, name, template: input.template, port: input.port ?? TEMPLATES[input.template].port };
}

/** Registers the app, then writes the project (the folder is written only once the app exists). */
export async function initApp(deps: InitDeps, raw: InitInput): Promise<InitResult> {
  const input = await checkInit(raw);
  const appUrl = `http://localhost:${input.port}`;
  const { app } = await createApp(deps, {
    name: input.name,
    redirectUris: [`${appUrl}/callback`],
    embedUrl: `${appUrl}/embed`,
  });
  const webhookSecret = await fetchWebhookSecret(deps, app.id);
  await keepWebhookSecret(deps, app.id, webhookSecret);

  // On a local sandbox, a free plan and a test user to sign in as, so the app works at once.
  let testUser: string | null = null;
  if (isLoopback(new URL(deps.siteUrl))) {
    await createPlan(deps, { app: app.id, body: planCreateBody({ name: 'Free', kind: 'free' }) });
    testUser = (await createTestUser(deps, { app: app.id, plan: 'free', name: 'Test User' })).id;
  }

  const files = await writeProject(input, {
    env: {
      APP_NAME: input.name,
      MKT_SITE_URL: deps.siteUrl,
      MKT_APP_ID: app.id,
      MKT_CLIENT_ID: app.client_id,
      MKT_CLIENT_SECRET: String(app.client_secret ?? ''),
      MKT_WEBHOOK_SECRET: webhookSecret,
      PORT: String(input.port),
      PAID_FEATURE: 'pro',
    },
    project: {
      app_id: app.id,
      template: input.template,
      port: input.port,
      command: [...TEMPLATES[input.template].command],
    },
  });
  const cd = relative(process.cwd(), input.dir) || '.';
  const install = input.template === 'node' ? 'npm install' : 'python3 -m pip install -r requirements.txt';
  return {
    dir: input.dir,
    app_id: app.id,
    client_id: app.client_id,
    template: input.template,
    app_url: appUrl,
    files,
    test_user_id: testUser,
    next: [
      `cd ${cd}`,
      install,
      'mkt dev',
      `mkt apps payments link --app ${app.id}   (then a paid plan: mkt plans create --app ${app.id} --name Pro --kind monthly --price 9.99 --currency USD --feature pro)`,
    ],
  };
}

const packageName = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'marketplace-app';

/** Copies the template with its placeholders filled; .env is created 0600 and never overwritten. */
async function writeProject(
  input: Required<InitInput>,
  content: { env: Record<string, string>; project: ProjectFile },
): Promise<string[]> {
  const from = join(templatesRoot(), input.template);
  const values: Record<string, string> = {
    name: input.name,
    package: packageName(input.name),
  };
  const written: string[] = [];
  await mkdir(input.dir, { recursive: true });
  for (const entry of await readdir(from, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const source = join(entry.parentPath, entry.name);
    // npm drops files named .gitignore from packages: the template keeps it as `gitignore`.
    const rel = relative(from, source).replace(/(^|\/)gitignore$/, '$1.gitignore');
    const text = (await readFile(source, 'utf8')).replace(
      /\{\{(name|package)\}\}/g,
      (_, k: string) => values[k]!,
    );
    await mkdir(join(input.dir, rel, '..'), { recursive: true });
    await writeFile(join(input.dir, rel), text, { flag: 'wx' });
    written.push(rel);
  }
  await writeFile(join(input.dir, PROJECT_FILE), `${JSON.stringify(content.project, null, 2)}\n`, {
    flag: 'wx',
  });
  const env = await open(join(input.dir, '.env'), 'wx', 0o600);
  try {
    await env.writeFile(
      "# Written by mkt init: this app's secrets. Git-ignored; never commit it.\n" +
        Object.entries(content.env)
          .map(([k, v]) => `${k}=${v}`)
          .join('\n') +
        '\n',
    );
  } finally {
    await env.close();
  }
  return [...written, PROJECT_FILE, '.env'].sort();
}
