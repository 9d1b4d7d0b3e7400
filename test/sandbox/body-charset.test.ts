import { describe, expect, it } from 'vitest';
import { useSandbox } from '../support/sandbox.js';

const ctx = useSandbox();

/** POST /apps/{id}/plans with `body` bytes declared as `contentType`. */
async function postPlan(body: Buffer, contentType: string) {
  const res = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}/plans`, {
    method: 'POST',
    headers: { 'x-api-key': ctx.sandbox.seed.test_key, 'content-type': contentType },
    body,
  });
  return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } };
}

const plan = (id: string) => Buffer.from(JSON.stringify({ id, name: 'Plain', kind: 'free' }), 'latin1');

describe('a JSON body in another charset', () => {
  it('is refused with 415 and changes nothing, even when its bytes would read as UTF-8', async () => {
    for (const type of [
      'application/json; charset=latin1',
      'application/json;charset="ISO-8859-1"',
      'application/json; charset=utf-16',
    ]) {
      const r = await postPlan(plan('latin'), type);
      expect([type, r.status, r.json.error?.code]).toEqual([type, 415, 'unsupported_media_type']);
      expect(r.json.error?.message).toBe('Send the body as application/json in UTF-8.');
    }
    const plans = await fetch(`${ctx.sandbox.siteUrl}/api/v1/apps/${ctx.sandbox.seed.app.id}/plans/latin`, {
      headers: { 'x-api-key': ctx.sandbox.seed.test_key },
    });
    expect(plans.status).toBe(404);
  });

  it('is taken when it says UTF-8, in any spelling, or no charset', async () => {
    expect((await postPlan(plan('u1'), 'application/json; charset=UTF-8')).status).toBe(201);
    expect((await postPlan(plan('u2'), 'application/json;charset="utf8"')).status).toBe(201);
    expect((await postPlan(plan('u3'), 'application/json')).status).toBe(201);
  });
});
