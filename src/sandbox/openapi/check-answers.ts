import { appendFileChecked, readOwnFileSync } from '../../platform/fs-atomic.js';
import { RefusedError } from '../../platform/refused.js';
import type { ServerResponse } from 'node:http';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { ValidateFunction } from 'ajv';

// MKT_SANDBOX_CHECK_ANSWERS (docs/CONTRIBUTING.md): every answer the sandbox gives is checked against
// the operation the document declares for it (status, content type, required headers, body), as a
// validating proxy would, and each mismatch is appended as one JSON line to a file. Loaded only when
// the setting is on: ajv is a development dependency, and the sandbox's own path does not change.

type Json = Record<string, unknown>;
/** A Hono application's `fetch` (the rest: the Node bindings it passes on). */
type Fetch<Rest extends unknown[]> = (request: Request, ...rest: Rest) => Response | Promise<Response>;
interface Operation {
  template: string;
  match: RegExp;
  literal: number;
  responses: Record<string, Json>;
}

/** The Node response @hono/node-server passes as `env.outgoing`. */
type Outgoing = Pick<ServerResponse, 'statusCode' | 'getHeader'>;

/** One mismatch, as a line of the file. */
export interface AnswerMismatch {
  method: string;
  path: string;
  status: number;
  operation?: string;
  problem: string;
}

/**
 * A schema that names its properties and leaves the others open (absent, `true` or `{}`) is
 * closed, so that a field the document never declares is a mismatch; a map (`additionalProperties`
 * with a schema) stays open, and branches of `allOf` are closed at their parent.
 */
function closed(node: unknown, inAllOf = false): unknown {
  if (Array.isArray(node)) return node.map((n) => closed(n));
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'allOf' && Array.isArray(v)) out[k] = v.map((n) => closed(n, true));
    else if (k === 'properties' && v && typeof v === 'object')
      out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, closed(s)]));
    else out[k] = closed(v);
  }
  const extra = out.additionalProperties;
  const open =
    extra === undefined ||
    extra === true ||
    (typeof extra === 'object' && Object.keys(extra as object).length === 0);
  if (!inAllOf && (out.properties || out.allOf) && open && out.unevaluatedProperties === undefined) {
    delete out.additionalProperties;
    out.unevaluatedProperties = false;
  }
  return out;
}

/**
 * A document `sandboxDocument()` wrote (MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT), read once; a missing file,
 * a link, another user's file or no JSON object is refused in a sentence (the sandbox does not start).
 */
export function savedDocument(path: string): Json {
  const code = 'answers_document';
  const text = readOwnFileSync(path, { maxBytes: 16 * 1024 * 1024, code });
  const refuse = (what: string) =>
    new RefusedError(code, `MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT names ${path}, which ${what}.`, [
      'unset MKT_SANDBOX_CHECK_ANSWERS_DOCUMENT   (each sandbox then makes the document itself)',
    ]);
  if (text === undefined) throw refuse('does not exist');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw refuse('is not JSON');
  }
  if (doc === null || typeof doc !== 'object' || typeof (doc as Json).paths !== 'object')
    throw refuse('is not an OpenAPI document');
  return doc as Json;
}

/** The document's operations and a validator per answer schema, compiled on first use. */
async function prepare(document: () => Json) {
  let ajvModules;
  try {
    ajvModules = [await import('ajv/dist/2020.js'), await import('ajv-formats')] as const;
  } catch (e) {
    throw new Error(
      `MKT_SANDBOX_CHECK_ANSWERS needs ajv and ajv-formats, development dependencies of mkt (a checkout after npm ci): ${String(e)}`,
    );
  }
  const [{ Ajv2020 }, { default: addFormats }] = ajvModules;
  const doc = document() as { paths: Record<string, Record<string, Json>>; components?: Json };
  // No check of each schema against JSON Schema's own meta-schema (ajv's validateSchema): compiling
  // that meta-schema took ~100 ms of CPU in every process that checks answers, and the document's
  // validity is test/openapi/openapi.test.ts's (@seriousme/openapi-schema-validator), not this.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  (addFormats as unknown as (a: typeof ajv) => void)(ajv);
  const operations = new Map<string, Operation[]>();
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const source = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
      const list = operations.get(method.toUpperCase()) ?? [];
      list.push({
        template: `${method.toUpperCase()} ${template}`,
        match: new RegExp(`^${source}$`),
        literal: template.replace(/\{\w+\}/g, '').length,
        responses: (op.responses ?? {}) as Record<string, Json>,
      });
      operations.set(method.toUpperCase(), list);
    }
  }
  // The most literal template first: /apps/{app_id}/plans before /apps/{app_id}/{anything}.
  for (const list of operations.values()) list.sort((a, b) => b.literal - a.literal);
  const compiled = new Map<unknown, ValidateFunction>();
  const validator = (schema: Json) => {
    let v = compiled.get(schema);
    if (!v)
      compiled.set(schema, (v = ajv.compile({ ...(closed(schema) as Json), components: doc.components })));
    return v;
  };
  return { operations, validator };
}
// Once per process: every sandbox a test process starts serves the same document.
let prepared: ReturnType<typeof prepare> | undefined;

/**
 * Wraps the sandbox's `fetch`: each answer is checked against the document (`document`, made once per
 * process), and each mismatch appended to `file`.
 */
export async function checkAnswers<Rest extends unknown[]>(
  fetch: Fetch<Rest>,
  file: string,
  document: () => Json,
): Promise<Fetch<Rest>> {
  const { operations, validator } = await (prepared ??= prepare(document));
  const check = async (
    request: Request,
    response: Response,
    node?: Outgoing,
  ): Promise<[Response, string[]]> => {
    const path = new URL(request.url).pathname;
    const op = operations.get(request.method)?.find((o) => o.match.test(path));
    if (!op) return [response, []]; // not in the document (the console, a 404 or 405 of no route)
    // A stream is answered on the Node response itself (@hono/node-server's RESPONSE_ALREADY_SENT),
    // and some headers (rate limits, the request id) are set there too.
    const sent = response === RESPONSE_ALREADY_SENT;
    const header = (name: string) =>
      response.headers.get(name) ?? (node?.getHeader(name) as string | undefined) ?? null;
    const status = sent ? (node?.statusCode ?? 0) : response.status;
    const declared =
      op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default;
    if (!declared) return [response, [`status ${status} is not declared`]];
    const problems: string[] = [];
    for (const [name, declaredHeader] of Object.entries((declared.headers ?? {}) as Record<string, Json>))
      if (declaredHeader.required === true && header(name) === null)
        problems.push(`header ${name} is missing`);
    const content = (declared.content ?? {}) as Record<string, { schema?: Json }>;
    const type = (header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    const media = Object.keys(content);
    if (sent || type === 'text/event-stream')
      return [
        response,
        media.includes(type)
          ? problems
          : [
              ...problems,
              `content type ${type || 'none'}, the document says ${media.join(', ') || 'no body'}`,
            ],
      ];
    const bytes = new Uint8Array(await response.arrayBuffer());
    const again = new Response(status === 204 || status === 304 ? null : bytes, response);
    if (media.length === 0) {
      if (bytes.length > 0) problems.push(`a body (${type || 'no type'}) where the document declares none`);
      return [again, problems];
    }
    const chosen = media.find(
      (m) => m === type || (m.endsWith('/*') && type.startsWith(m.slice(0, -1))) || m === '*/*',
    );
    if (!chosen)
      return [again, [...problems, `content type ${type || 'none'}, the document says ${media.join(', ')}`]];
    const schema = content[chosen]!.schema;
    if (schema && /[/+]json$/.test(chosen)) {
      let body: unknown;
      try {
        body = JSON.parse(new TextDecoder().decode(bytes));
      } catch {
        return [again, [...problems, 'the body is not JSON']];
      }
      const validate = validator(schema);
      const errors = validate(body) ? [] : (validate.errors ?? []);
      const extra = (e: (typeof errors)[number]) =>
        e.keyword === 'unevaluatedProperties' || e.keyword === 'additionalProperties';
      // An undeclared field inside `anyOf: [object, null]` also fails the other branches: say only the field.
      const fields = new Set(errors.filter(extra).map((e) => e.instancePath));
      for (const e of errors) {
        if (extra(e))
          problems.push(
            `field ${e.instancePath}/${String(e.params.unevaluatedProperty ?? e.params.additionalProperty)} is not declared`,
          );
        else if (!(fields.has(e.instancePath) && ['anyOf', 'oneOf', 'type'].includes(e.keyword)))
          problems.push(`${e.instancePath || '/'} ${e.message ?? e.keyword}`);
      }
    }
    return [again, problems];
  };

  return async (request, ...rest) => {
    const { method, url } = request;
    const response = await fetch(request, ...rest);
    if (method === 'HEAD') return response;
    const [answer, problems] = await check(
      request,
      response,
      (rest[0] as { outgoing?: Outgoing } | undefined)?.outgoing,
    );
    if (problems.length > 0) {
      const path = new URL(url).pathname;
      const op = operations.get(method)?.find((o) => o.match.test(path));
      const lines = problems.map((problem) =>
        JSON.stringify({
          method,
          path,
          status: answer.status,
          operation: op?.template,
          problem,
        } satisfies AnswerMismatch),
      );
      appendFileChecked(file, `${lines.join('\n')}\n`, 'answer_log_unsafe');
    }
    return answer;
  };
}
