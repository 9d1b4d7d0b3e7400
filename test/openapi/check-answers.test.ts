import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxDocument } from '../../src/sandbox/app.js';
import { checkAnswers } from '../../src/sandbox/openapi/check-answers.js';
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
