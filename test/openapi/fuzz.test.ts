import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/start-sandbox.js';
import { developerToken, startTestSandbox } from '../support/sandbox.js';
import { sample, seeded, type Sampler } from './fuzz/sample.js';

// A fuzz run generated from the OpenAPI document the sandbox serves: for each operation, requests
// whose path, query and body are made from its schemas (checked valid by ajv) and some made invalid
// (checked invalid), with realistic ids in paths, sent to a sandbox that checks each answer against
// the document (MKT_SANDBOX_CHECK_ANSWERS). It finds: a 5xx; an answer outside the document; a request
// valid by the document that the server refuses (400, 413, 415, 422). Seeded (MKT_FUZZ_SEED, default
// 50), bounded in requests and time. Figures: BENCHMARKS.md (the fuzz run).

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  parameters?: Array<{ name: string; in: string; required?: boolean; schema?: Json }>;
  requestBody?: { required?: boolean; content: Record<string, { schema?: Json }> };
  security?: unknown[];
}
interface Sent {
  op: string;
  valid: boolean;
  status: number;
  code: string;
}

const SEED = Number(process.env.MKT_FUZZ_SEED ?? 50);
const VALID = 30; // requests per operation made valid,
const INVALID = 10; // and made invalid (where the document can say so)
const DEADLINE_MS = 100_000;
const REFUSALS = [400, 413, 415, 422];

let sandbox: Sandbox;
let folder: string;
let doc: { paths: Record<string, Record<string, Operation>>; components?: Json };
let ids: Record<string, string>;
let token: string;
let shift = 0; // the sandbox's clock, moved a minute on now and then: no test of rate limits here

const ajv = (() => {
  const require = createRequire(import.meta.url);
  const { Ajv2020 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const instance = new Ajv2020({ strict: false, allErrors: false });
  (require('ajv-formats') as (a: typeof instance) => void)(instance);
  return instance;
})();
const compiled = new Map<Json, ValidateFunction>();
const validator = (schema: Json) => {
  let v = compiled.get(schema);
  if (!v) compiled.set(schema, (v = ajv.compile({ ...schema, components: doc.components })));
  return v;
};

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'mkt-fuzz-'));
  sandbox = await startTestSandbox({
    checkAnswers: join(folder, 'answers.jsonl'),
    now: () => Date.now() + shift,
  });
  doc = (await (await fetch(`${sandbox.siteUrl}/api/v1/openapi.json`)).json()) as typeof doc;
  token = await developerToken(sandbox, ['apps:write', 'identity:read', 'entitlements:read']);
  const { app } = sandbox.seed;
  const call = async (method: string, path: string, body?: unknown, auth = 'key') => {
    const res = await fetch(`${sandbox.siteUrl}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...(auth === 'key' ? { 'x-api-key': sandbox.seed.test_key } : { authorization: `Bearer ${token}` }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Json;
  };
  const plan = {
    name: 'Fuzz',
    kind: 'monthly',
    price: { amount: 900, currency: 'USD' },
    features: ['export'],
  };
  await call('POST', `/api/v1/apps/${app.id}/plans`, { id: 'fuzz-plan', ...plan });
  const key = await call('POST', `/api/v1/apps/${app.id}/keys`, { mode: 'test' });
  const user = await call('POST', '/api/v1/simulator/users', { app_id: app.id, plan: 'fuzz-plan' });
  const gone = await call('POST', '/api/v1/apps', { name: 'Fuzz Gone', redirect_uris: [] }, 'token');
  const sent = await call('POST', '/api/v1/simulator/events', { app_id: app.id, event: 'user.authorized' });
  const link = await call('POST', `/api/v1/apps/${app.id}/payouts/link`);
  ids = {
    app_id: app.id,
    gone_app_id: gone.id as string,
    plan_id: 'fuzz-plan',
    plan: 'fuzz-plan',
    key_id: key.id as string,
    user_id: user.id as string,
    delivery_id: sent.delivery_id as string,
    link_id: String(link.url).split('/').pop()!,
    file: `${user.id as string}.svg`,
    client_id: app.client_id,
    client_secret: app.client_secret,
  };
}, 60_000);
afterAll(async () => {
  await sandbox?.close();
  await rm(folder, { recursive: true, force: true });
});

/** Realistic values by name (ids the sandbox has, loopback URLs); the rest is made from the schema. */
function hints(random: () => number): Sampler['hint'] {
  return (name) => {
    if (name in ids) return ids[name];
    if (/url$/i.test(name)) return 'http://127.0.0.1:9/hooks';
    if (/redirect_uris?$/.test(name)) return 'http://127.0.0.1/callback';
    if (name === 'email') return `fuzz${Math.floor(random() * 1e6)}@sandbox.test`;
    if (name === 'currency') return 'USD';
    if (name === 'feature' || name === 'features') return 'export';
    if (name === 'limit') return 1 + Math.floor(random() * 100);
    return undefined;
  };
}

interface Request {
  path: string;
  query: Record<string, unknown>;
  body?: unknown;
  media?: string;
  /** Sent as is instead of `body` (broken JSON). */
  raw?: string;
}

/** A request made from the operation's schemas, or undefined when none came out valid. */
function validRequest(s: Sampler, template: string, op: Operation): Request | undefined {
  for (let attempt = 0; attempt < 5; attempt++) {
    const request: Request = { path: template, query: {} };
    let ok = true;
    for (const p of op.parameters ?? []) {
      if (p.in === 'path') {
        const id = op.method === 'DELETE' && p.name === 'app_id' && template === '/api/v1/apps/{app_id}';
        request.path = request.path.replace(
          `{${p.name}}`,
          String(id ? ids.gone_app_id : (s.hint(p.name) ?? sample(s, p.schema, p.name))),
        );
      } else if (p.in === 'query' && p.name !== 'cursor' && (p.required || s.random() < 0.4)) {
        // (A cursor is never made up: a client sends only one the server gave it.)
        const value = sample(s, p.schema, p.name);
        if (p.schema && !validator(p.schema)(value)) ok = false;
        request.query[p.name] = value;
      }
    }
    const content = op.requestBody?.content ?? {};
    const media = Object.keys(content);
    if (media.length > 0 && (op.requestBody?.required || s.random() < 0.8)) {
      request.media = media[Math.floor(s.random() * media.length)]!;
      const schema = content[request.media]!.schema;
      request.body = sample(s, schema);
      if (schema && !validator(schema)(request.body)) ok = false;
    }
    if (ok) return request;
  }
  return undefined;
}

/** A request the document does not allow, made from a valid one (the kind cycles with `n`). */
function invalidRequest(s: Sampler, op: Operation, valid: Request, n: number): Request | undefined {
  const content = op.requestBody?.content ?? {};
  const json = Object.keys(content).find((m) => m.endsWith('json'));
  const schema = json ? content[json]!.schema : undefined;
  const body =
    valid.media === json && valid.body && typeof valid.body === 'object' ? (valid.body as Json) : {};
  const still = (b: unknown) => schema !== undefined && validator(schema)(b);
  switch (n % 5) {
    case 0:
      return json ? { ...valid, media: json, raw: '{"unterminated' } : undefined;
    case 1: {
      const required = (schema?.required as string[] | undefined) ?? [];
      if (!json || required.length === 0) return undefined;
      const { [required[n % required.length]!]: _dropped, ...rest } = body;
      return still(rest) ? undefined : { ...valid, media: json, body: rest };
    }
    case 2: {
      const keys = Object.keys(body);
      if (!json || keys.length === 0) return undefined;
      const key = keys[n % keys.length]!;
      const wrong = { ...body, [key]: typeof body[key] === 'string' ? 12345 : 'not-this-type' };
      return still(wrong) ? undefined : { ...valid, media: json, body: wrong };
    }
    case 3: {
      if (!json) return undefined;
      const extra = { ...body, zz_not_a_field: 'x' };
      return still(extra) ? undefined : { ...valid, media: json, body: extra };
    }
    default: {
      const p = (op.parameters ?? []).find(
        (q) => q.in === 'query' && q.schema && !validator(q.schema)('zz!'),
      );
      if (p) return { ...valid, query: { ...valid.query, [p.name]: 'zz!' } };
      return json && op.requestBody?.required ? { ...valid, media: 'text/plain', raw: 'x' } : undefined;
    }
  }
}

/** Sends one request; answers its status and error code (a stream: its headers only). */
async function send(
  method: string,
  op: Operation,
  r: Request,
  random: () => number,
): Promise<[number, string, string]> {
  const url = new URL(r.path, sandbox.siteUrl);
  for (const [k, v] of Object.entries(r.query))
    for (const one of Array.isArray(v) ? v : [v]) url.searchParams.append(k, String(one));
  const headers: Record<string, string> = {};
  if ((op.security ?? []).length > 0) {
    if (random() < 0.5) headers['x-api-key'] = sandbox.seed.test_key;
    else headers.authorization = `Bearer ${token}`;
  }
  let body: string | undefined;
  if (r.media) {
    headers['content-type'] = r.media;
    body =
      r.raw ??
      (r.media.endsWith('json')
        ? JSON.stringify(r.body)
        : new URLSearchParams(
            Object.entries((r.body ?? {}) as Json).map(([k, v]): [string, string] => [
              k,
              typeof v === 'string' ? v : JSON.stringify(v),
            ]),
          ).toString());
  }
  const res = await fetch(url, {
    method,
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(10_000),
  });
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return [res.status, '', ''];
  }
  const text = await res.text();
  const code = /"error"\s*:\s*(?:\{\s*"code"\s*:\s*)?"([a-z_]+)"/.exec(text)?.[1] ?? '';
  const message =
    /"(?:message|error_description)"\s*:\s*"((?:[^"\\]|\\.)*)"/.exec(text)?.[1] ?? text.slice(0, 120);
  const shown = `${method} ${url.pathname}${url.search} ${r.raw ?? (r.body === undefined ? '' : JSON.stringify(r.body))}`;
  return [res.status, code, `${message} (sent: ${shown.slice(0, 200)})`];
}

describe('a fuzz run generated from the OpenAPI document', () => {
  /**
   * Refusals of requests the document allows that depend on the server's state, which no schema can
   * state: values only the server issues (made up here), and bounds measured from where the run has
   * moved the clock. Counted apart and printed; every other refusal of a valid request is a finding.
   */
  const STATEFUL: Array<[RegExp, string]> = [
    [
      /^POST \/api(\/v1)?\/oauth\/token 400 invalid_grant$/,
      'a code, refresh token or device code the server never issued',
    ],
    [
      /^(GET|POST) \/oauth\/authorize 400 $/,
      'a redirect URI not registered, a consent request id or CSRF token never issued',
    ],
    [/^POST \/oauth\/device 400 $/, 'a user code or CSRF token never issued'],
    [
      /^POST \/api\/v1\/simulator\/clock 400 invalid_request$/,
      'the 100-year bound, from the business time the run reached',
    ],
    [
      /^GET \/api\/v1\/entitlements 400 invalid_request$/,
      'user_id is required with an API key (the credential, not the schema)',
    ],
  ];

  it('finds no 5xx, no answer outside the document, no valid request refused', async () => {
    const started = performance.now();
    const random = seeded(SEED);
    const s: Sampler = {
      random,
      hint: hints(random),
      resolve: (ref) =>
        ref
          .slice(2)
          .split('/')
          .reduce<Json>((o, k) => o[k] as Json, doc as unknown as Json),
    };
    // The deletions last, so that what they delete was there for the rest.
    const operations = Object.entries(doc.paths)
      .flatMap(([path, item]) =>
        Object.entries(item).map(([m, op]) => ({ ...op, method: m.toUpperCase(), path })),
      )
      .sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    const sent: Sent[] = [];
    let ungenerated = 0;
    const findings = new Map<string, number>();
    const stateful = new Map<string, number>();
    const examples = new Map<string, string>();
    const found = (kind: string, example = '') => {
      findings.set(kind, (findings.get(kind) ?? 0) + 1);
      if (!examples.has(kind)) examples.set(kind, example);
    };
    for (const op of operations) {
      const name = `${op.method} ${op.path}`;
      for (let n = 0; n < VALID + INVALID && performance.now() - started < DEADLINE_MS; n++) {
        const valid = validRequest(s, op.path, op);
        if (!valid) {
          ungenerated++;
          continue;
        }
        const request = n < VALID ? valid : invalidRequest(s, op, valid, n);
        if (!request) continue;
        if (sent.length % 80 === 79) shift += 61_000;
        const [status, code, example] = await send(op.method, op, request, random);
        sent.push({ op: name, valid: n < VALID, status, code });
        if (status >= 500) found(`5xx: ${name} ${status} ${code}`, example);
        else if (n < VALID && REFUSALS.includes(status)) {
          const kind = `${name} ${status} ${code}`;
          if (STATEFUL.some(([pattern]) => pattern.test(kind)))
            stateful.set(kind, (stateful.get(kind) ?? 0) + 1);
          else found(`valid, refused: ${kind}`, example);
        }
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const outside = (await readFile(join(folder, 'answers.jsonl'), 'utf8').catch(() => ''))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { operation: string; status: number; problem: string });
    for (const m of outside)
      found(
        `outside the document: ${m.operation} ${m.status}: ${m.problem.replace(/\/\d+(?=\/|\s)/g, '/*')}`,
      );
    const invalidAccepted = sent.filter((r) => !r.valid && r.status < 300).length;
    const summary = {
      seed: SEED,
      requests: sent.length,
      operations: new Set(sent.map((r) => r.op)).size,
      valid: sent.filter((r) => r.valid).length,
      invalid: sent.filter((r) => !r.valid).length,
      invalid_accepted: invalidAccepted,
      ungenerated,
      seconds: Number(seconds.toFixed(1)),
      finding_kinds: findings.size,
      findings: [...findings.values()].reduce((a, b) => a + b, 0),
      stateful_refusals: Object.fromEntries(stateful),
    };
    console.log(`fuzz: ${JSON.stringify(summary)}`);
    expect(summary.requests).toBeGreaterThan(1000);
    expect(summary.operations).toBeGreaterThanOrEqual(
      Object.values(doc.paths).flatMap(Object.keys).length - 2,
    );
    const listed = [...findings].map(
      ([kind, n]) => `${n}x ${kind}${examples.get(kind) ? ` — e.g. ${examples.get(kind)}` : ''}`,
    );
    expect(listed.sort()).toEqual([]);
  }, 150_000);
});
