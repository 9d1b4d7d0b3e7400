import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxDocument } from '../../src/sandbox/app.js';
import { runMkt, tempDir } from '../support/cli.js';

// A client generated from the document by standard tools (openapi-typescript for the types,
// openapi-fetch for the calls), type-checked by TypeScript, then run by `mkt sandbox exec` against
// a fresh sandbox, as a developer's suite in another language would use it.

const root = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
let config: { path: string; remove(): Promise<void> };

const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './schema.ts';

const env = process.env as Record<string, string>;
const client = createClient<paths>({ baseUrl: env.MKT_SITE_URL, headers: { 'x-api-key': env.MKT_API_KEY } });
const app_id = env.MKT_APP_ID;
const me = await client.GET('/api/v1/whoami');
const plan = await client.POST('/api/v1/apps/{app_id}/plans', {
  params: { path: { app_id } },
  body: { id: 'gold', name: 'Gold', kind: 'monthly', price: { amount: 1500, currency: 'USD' }, trial_days: 14 },
});
const users = await client.GET('/api/v1/simulator/users', { params: { query: { app_id } } });
const missing = await client.GET('/api/v1/apps/{app_id}/plans/{plan_id}', { params: { path: { app_id, plan_id: 'nope' } } });
const first: string = me.data?.email ?? '';
console.log(JSON.stringify({ me: first, plan: plan.data?.trial_days, users: users.data?.data.length, missing: missing.error?.error.code, status: missing.response.status }));
`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mkt-client-'));
  config = await tempDir();
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
  const ast = await openapiTS(sandboxDocument() as never);
  await writeFile(join(dir, 'schema.ts'), astToString(ast));
  await writeFile(join(dir, 'client.ts'), CLIENT);
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await config?.remove();
});

/** TypeScript's complaints about `file` ('' when none). */
function typecheck(...files: string[]): string {
  const args = [
    '--noEmit',
    '--strict',
    '--target',
    'es2022',
    '--module',
    'nodenext',
    '--allowImportingTsExtensions',
  ];
  const result = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/typescript/bin/tsc'),
      ...args,
      '--skipLibCheck',
      '--types',
      'node',
      '--typeRoots',
      join(root, 'node_modules/@types'),
      ...files,
    ],
    {
      cwd: dir,
      encoding: 'utf8',
    },
  );
  return result.stdout + result.stderr;
}

describe('a client generated from the OpenAPI document', () => {
  it('type-checks against the generated types, and calls the sandbox', async () => {
    // One run of TypeScript over the client and a copy with a plan kind the document does not list.
    await writeFile(join(dir, 'wrong.ts'), CLIENT.replace("kind: 'monthly'", "kind: 'weekly'"));
    const complaints = typecheck('client.ts', 'wrong.ts');
    expect(complaints).not.toMatch(/client\.ts/);
    expect(complaints).toMatch(/wrong\.ts.*"weekly"/);
    const run = await runMkt(['sandbox', 'exec', '--', process.execPath, 'client.ts'], config.path, {
      cwd: dir,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      me: 'dev@sandbox.test',
      plan: 14,
      users: 3,
      missing: 'not_found',
      status: 404,
    });
  }, 90_000);
});
