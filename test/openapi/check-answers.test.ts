import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxDocument } from '../../src/sandbox/app.js';
import { checkAnswers } from '../../src/sandbox/openapi/check-answers.js';
import { runMkt } from '../support/cli.js';
import { startTestSandbox } from '../support/sandbox.js';

// MKT_SANDBOX_CHECK_ANSWERS: the checker itself, on answers that break the document in each way it
// names (a server function that answers what the test says), and on a real sandbox with the setting.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mkt-check-answers-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const recorded = async (file: string) =>
  (await readFile(file, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { operation?: string; status: number; problem: string });

describe('the answer checker', () => {
  it('records an undeclared status, field, content type and body, and passes what the document allows', async () => {
    const file = join(dir, 'one.jsonl');
    let answer = () => new Response('', { status: 200 });
    const fetch = await checkAnswers(
      async () => answer(),
      file,
      () => sandboxDocument(),
    );
    const ask = (path: string, method = 'GET') => fetch(new Request(`http://127.0.0.1:1${path}`, { method }));
    // The headers every answer of the API carries (the request id, the rate limit).
    const headers = {
      'x-request-id': 'req_1',
      'x-ratelimit-limit': '100',
      'x-ratelimit-remaining': '99',
      'x-ratelimit-reset': '1800000000',
    };
    const json = (body: unknown, status = 200) =>
      new Response(JSON.stringify(body), {
        status,
        headers: { ...headers, 'content-type': 'application/json' },
      });
    const me = { id: 'usr_1', email: 'a@b.test', name: 'A', avatar_url: 'https://example.test/a.png' };

    answer = () => json(me);
    const passed = await ask('/api/v1/whoami');
    expect(await passed.json()).toEqual(me); // the answer goes on unchanged
    expect(await recorded(file)).toEqual([]);

    answer = () => json({ ...me, secret_field: 1 });
    await ask('/api/v1/whoami');
    answer = () => new Response('hi', { status: 200, headers: { ...headers, 'content-type': 'text/plain' } });
    await ask('/api/v1/whoami');
    answer = () => json({ id: 7 });
    await ask('/api/v1/whoami');
    answer = () => new Response(null, { status: 204 });
    await ask('/api/v1/whoami');
    // Not in the document at all: left alone.
    answer = () => new Response('x', { status: 404 });
    await ask('/console/anything');
    const problems = (await recorded(file)).map((m) => `${m.operation} ${m.status}: ${m.problem}`);
    expect(problems).toContain('GET /api/v1/whoami 200: field /secret_field is not declared');
    expect(problems).toContain(
      'GET /api/v1/whoami 200: content type text/plain, the document says application/json',
    );
    expect(problems).toContain('GET /api/v1/whoami 200: /id must be string');
    expect(problems.some((p) => p.startsWith('GET /api/v1/whoami 204: '))).toBe(true);
    expect(problems.some((p) => p.includes('/console'))).toBe(false);
  });

  it('checks every answer of a sandbox started with the setting', async () => {
    const file = join(dir, 'sandbox.jsonl');
    const sandbox = await startTestSandbox({ checkAnswers: file });
    try {
      const key = { 'x-api-key': sandbox.seed.test_key };
      expect((await fetch(`${sandbox.siteUrl}/api/v1/whoami`, { headers: key })).status).toBe(200);
      // The request log's entries carry fields the document did not declare at 0805a53.
      const logs = await fetch(`${sandbox.siteUrl}/api/v1/apps/${sandbox.seed.app.id}/logs`, {
        headers: key,
      });
      expect(logs.status).toBe(200);
      const found = await recorded(file);
      expect(found.filter((m) => m.operation === 'GET /api/v1/whoami')).toEqual([]);
      expect(found.every((m) => m.operation === 'GET /api/v1/apps/{app_id}/logs')).toBe(true);
    } finally {
      await sandbox.close();
      await rm(file, { force: true });
    }
  });
});

describe('the document a run makes once (MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT)', () => {
  // `mkt sandbox exec` in a process of its own (the checker prepares its document once a process).
  const ask = `fetch(process.env.MKT_SITE_URL + '/api/v1/whoami', { headers: { 'x-api-key': process.env.MKT_API_KEY } }).then((r) => console.log(r.status));`;
  const exec = (document: string, file: string) =>
    runMkt(['sandbox', 'exec', '--', process.execPath, '-e', ask], dir, {
      env: { MKT_SANDBOX_CHECK_ANSWERS: file, MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT: document },
    });

  it('is the document a sandbox checks its answers against', async () => {
    // whoami's answer declared with its id alone: the fields it does send are then undeclared.
    const doc = sandboxDocument() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const ok = (doc.paths['/api/v1/whoami']!.get!.responses as Record<string, Record<string, unknown>>)[
      '200'
    ]!;
    ok.content = {
      'application/json': { schema: { type: 'object', properties: { id: { type: 'string' } } } },
    };
    const document = join(dir, 'narrow.json');
    await writeFile(document, JSON.stringify(doc), { mode: 0o600 });
    const file = join(dir, 'narrow.jsonl');
    const run = await exec(document, file);
    expect(run.stdout.trim()).toBe('200');
    expect(run.code).toBe(0);
    const problems = (await recorded(file)).map((m) => `${m.operation} ${m.status}: ${m.problem}`);
    expect(problems).toContain('GET /api/v1/whoami 200: field /email is not declared');
  });

  it('stops the sandbox in a sentence when it is missing, a link, not JSON or no document', async () => {
    const link = join(dir, 'link.json');
    await symlink('/etc/hostname', link);
    const notJson = join(dir, 'not.json');
    await writeFile(notJson, '{"paths":', { mode: 0o600 });
    const notDoc = join(dir, 'array.json');
    await writeFile(notDoc, '[1, 2]', { mode: 0o600 });
    for (const [document, says] of [
      [
        join(dir, 'missing.json'),
        /MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT names .*missing\.json, which does not exist\./,
      ],
      [link, /link\.json is a symbolic link/],
      [notJson, /which is not JSON\./],
      [notDoc, /which is not an OpenAPI document\./],
    ] as const) {
      const run = await exec(document, join(dir, 'refused.jsonl'));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(says);
      expect(run.stderr).not.toMatch(/Internal error/);
      expect(run.stdout).toBe(''); // the command never ran
    }
  });
});
