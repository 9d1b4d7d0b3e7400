import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { useSandbox } from '../support/sandbox.js';
import { call } from './helpers.js';

// Requests at the edges of HTTP: a declared body over the limit, a body where none is taken, dot
// segments in the path, and clock advances that arrive together.

const ctx = useSandbox({ sandboxPerTest: true });
const key = () => ({ key: ctx.sandbox.seed.test_key });

/** Sends `head` (a request head, CRLF-terminated lines) on a raw socket; answers what came back. */
function raw(head: string): Promise<string> {
  const url = new URL(ctx.sandbox.siteUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.setEncoding('utf8').on('data', (d: string) => (text += d));
    socket.on('close', () => resolve(text)).on('error', reject);
    setTimeout(() => socket.destroy(), 3_000);
  });
}

describe('bodies', () => {
  it('answers 413 to a declared Content-Length over 1 MiB before reading the body', async () => {
    const host = new URL(ctx.sandbox.siteUrl).host;
    const started = Date.now();
    const answer = await raw(
      `POST /api/v1/simulator/users HTTP/1.1\r\nHost: ${host}\r\nX-Api-Key: ${ctx.sandbox.seed.test_key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 99999999\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/payload_too_large/);
    expect(Date.now() - started).toBeLessThan(2_500);
  });

  it('refuses a body on GET and DELETE with a 400 that says so', async () => {
    const host = new URL(ctx.sandbox.siteUrl).host;
    const get = await raw(
      `GET /api/v1/whoami HTTP/1.1\r\nHost: ${host}\r\nX-Api-Key: ${ctx.sandbox.seed.test_key}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    );
    expect(get).toMatch(/^HTTP\/1\.1 400 /);
    expect(get).toMatch(/GET request takes no body/);
    const keys = await call(ctx.sandbox, 'GET', `/api/v1/apps/${ctx.sandbox.seed.app.id}/keys`, key());
    const live = keys.json.data.find((k: { mode: string }) => k.mode === 'live');
    const del = await call(ctx.sandbox, 'DELETE', `/api/v1/apps/${ctx.sandbox.seed.app.id}/keys/${live.id}`, {
      ...key(),
      body: { please: true },
    });
    expect(del.status).toBe(400);
    expect(del.json.error.message).toMatch(/DELETE request takes no body/);
    // Nothing was removed.
    const after = await call(ctx.sandbox, 'GET', `/api/v1/apps/${ctx.sandbox.seed.app.id}/keys`, key());
    expect(after.json.data.map((k: { id: string }) => k.id)).toContain(live.id);
  });
});

describe('paths', () => {
  it('does not resolve dot segments into another route', async () => {
    const host = new URL(ctx.sandbox.siteUrl).host;
    for (const path of [
      '/avatars/%2e%2e',
      '/avatars/../api/v1/openapi.json',
      '/avatars/%2E%2e/api/v1/openapi.json',
      '/a/./b',
    ]) {
      const answer = await raw(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
      expect(answer, path).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer, path).toMatch(/must not have .{1,8}\..{1,8} or .{1,8}\.\..{1,8} segments/);
    }
    // A dot inside a segment is fine.
    expect((await call(ctx.sandbox, 'GET', '/api/v1/openapi.json')).status).toBe(200);
  });
});

describe('the business clock', () => {
  it('runs ten concurrent advances one at a time, each answer saying what happened', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        call(ctx.sandbox, 'POST', '/api/v1/simulator/clock', { ...key(), body: { advance_s: 86_400 } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const spans = answers
      .map((a) => ({ from: Date.parse(a.json.from), now: Date.parse(a.json.now) }))
      .sort((a, b) => a.from - b.from);
    for (const [i, span] of spans.entries()) {
      // Each moved a day from where it found the clock, and none overlaps the one before it.
      expect(span.now - span.from).toBeGreaterThanOrEqual(86_400_000);
      expect(span.now - span.from).toBeLessThan(86_400_000 + 60_000);
      if (i > 0) expect(span.from).toBeGreaterThanOrEqual(spans[i - 1]!.now);
    }
    const clock = (await call(ctx.sandbox, 'GET', '/api/v1/simulator/clock', key())).json;
    expect(clock.offset_s).toBeGreaterThanOrEqual(10 * 86_400);
  }, 60_000);
});
