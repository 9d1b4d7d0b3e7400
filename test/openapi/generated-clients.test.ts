import { spawnSync } from 'node:child_process';
import { copyFile, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient } from '@hey-api/openapi-ts';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxDocument } from '../../src/sandbox/app.js';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { developerToken, startTestSandbox } from '../support/sandbox.js';
import type { Flow } from './clients/flow.js';

// Clients generated from the document by two standard generators — openapi-typescript (with
// openapi-fetch) and @hey-api/openapi-ts (its SDK and fetch client) — type-check, strict and without
// a cast, in programs that read what the main flows answer (test/openapi/clients/), and those
// programs then run against a sandbox on 127.0.0.1 (each answer checked: test/support/check-answers.ts).

const root = fileURLToPath(new URL('../..', import.meta.url));
const programs = fileURLToPath(new URL('./clients/', import.meta.url));
let dir: string;
let sandbox: Sandbox;
let flow: Flow;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mkt-clients-'));
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
  for (const file of await readdir(programs)) await copyFile(join(programs, file), join(dir, file));
  const document = join(dir, 'openapi.json');
  await writeFile(document, JSON.stringify(sandboxDocument()));
  await writeFile(join(dir, 'schema.ts'), astToString(await openapiTS(new URL(`file://${document}`))));
  await createClient({
    input: document,
    output: { path: join(dir, 'hey'), importFileExtension: '.ts' },
    logs: { level: 'silent' },
  });
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
  sandbox = await startTestSandbox();
  flow = {
    siteUrl: sandbox.siteUrl,
    key: sandbox.seed.test_key,
    token: await developerToken(sandbox, ['apps:write']),
    appId: sandbox.seed.app.id,
    userId: sandbox.seed.users[0]!.id,
  };
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  await rm(dir, { recursive: true, force: true });
});

/** TypeScript's complaints about `files` in the generated folder, strict ('' when none). */
function typecheck(...files: string[]): string {
  const result = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/typescript/bin/tsc'),
      ...['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext'],
      ...['--allowImportingTsExtensions', '--skipLibCheck', '--types', 'node'],
      ...['--typeRoots', join(root, 'node_modules/@types'), ...files],
    ],
    { cwd: dir, encoding: 'utf8', timeout: 90_000 },
  );
  return result.stdout + result.stderr;
}

describe('clients generated from the OpenAPI document', () => {
  it('type-check with no cast (and a wrong plan kind does not)', async () => {
    for (const file of ['fetch-flow.ts', 'hey-flow.ts'])
      await writeFile(
        join(dir, `wrong-${file}`),
        (await readFile(join(dir, file), 'utf8')).replace("kind: 'monthly'", "kind: 'weekly'"),
      );
    const complaints = typecheck('fetch-flow.ts', 'hey-flow.ts', 'wrong-fetch-flow.ts', 'wrong-hey-flow.ts');
    const own = complaints.split('\n').filter((l) => /^(fetch|hey)-flow\.ts/.test(l));
    expect(own).toEqual([]);
    expect(complaints).toMatch(/wrong-fetch-flow\.ts.*"weekly"/);
    expect(complaints).toMatch(/wrong-hey-flow\.ts.*"weekly"/);
    for (const file of ['fetch-flow.ts', 'hey-flow.ts'])
      expect(await readFile(join(programs, file), 'utf8')).not.toMatch(/\bas\s+[A-Z{(]|<[A-Z]\w*>\s*\w/);
  }, 90_000);

  it.each([
    ['openapi-typescript and openapi-fetch', 'fetch-flow.ts', 'Fetch Flow'],
    ['@hey-api/openapi-ts', 'hey-flow.ts', 'Hey Flow'],
  ])('%s: the main flows against a sandbox', async (_, file, name) => {
    const program = (await import(join(dir, file))) as { main(flow: Flow): Promise<unknown> };
    expect(await program.main(flow)).toEqual({
      email: 'dev@sandbox.test',
      plan: 'pro-monthly',
      limit: 10000,
      apps: 1,
      made: name,
      secret: true,
      trial_days: 0,
      key: 'test_',
      delivery: 'dlv_',
      webhook: 'no_url',
      listeners: 0,
    });
  });
});
