import type { RouteConfig, RouteConfigToTypedResponse } from '@hono/zod-openapi';
import type { Context, Hono, MiddlewareHandler, TypedResponse } from 'hono';
import type { StatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import type { SandboxEnv } from './env.js';
import { checkJsonBody, checkQuery } from './schemas.js';

// One declaration per route (docs/DECISIONS.md, "One declaration per route"): `createRoute` holds the
// route's request, every status it answers with its body and headers, and its security. `openapi`
// mounts it: the same declaration checks the request (query, JSON body) before the handler runs,
// types the handler's answers (an undeclared status or body does not type-check), and is what the
// document is made from (src/sandbox/openapi/document.ts reads it back from the router).
// @hono/zod-openapi is loaded only to make the document: its types here cost nothing at start.

/** A route's declaration: @hono/zod-openapi's RouteConfig, written once beside its handler. */
export function createRoute<const R extends RouteConfig>(route: R): R {
  return route;
}

type Schema<T> = T extends { schema: infer S extends z.ZodType } ? z.output<S> : never;
/** The JSON body a declaration checks (`{}` when it declares none). */
type BodyOf<R extends RouteConfig> = R['request'] extends { body?: { content: infer C } }
  ? C extends { 'application/json': infer M }
    ? Schema<M>
    : Record<string, never>
  : Record<string, never>;
/** The query a declaration checks. */
type QueryOf<R extends RouteConfig> = R['request'] extends { query?: infer Q extends z.ZodType }
  ? z.output<Q>
  : Record<string, never>;
/** `/apps/{app_id}` as Hono writes it, `/apps/:app_id`. */
type HonoPath<P extends string> = P extends `${infer A}{${infer N}}${infer B}`
  ? `${A}:${N}${HonoPath<B>}`
  : P;

/** What a route's handler sees: its checked body and query (`c.get('body')`, `c.get('query')`). */
export type DeclaredContext<R extends RouteConfig> = Context<
  SandboxEnv & { Variables: { body: BodyOf<R>; query: QueryOf<R> } },
  HonoPath<R['path']>
>;

/** What a handler may answer: a declared status with its declared body (a page or a stream: any Response). */
export type DeclaredAnswer<R extends RouteConfig> = RouteConfigToTypedResponse<R> | NoContent<R>;
/** A declared status without a body (204, a redirection), as `c.body(null, s)` or `c.redirect` make it. */
type NoContent<R extends RouteConfig> = {
  [S in keyof R['responses']]: R['responses'][S] extends { content: object }
    ? never
    : S extends StatusCode
      ? Response & TypedResponse<null | undefined, S, 'body' | 'redirect'>
      : never;
}[keyof R['responses']];

/** How a route reads its request: checked here from the declaration, or by the handler itself. */
export interface MountOptions {
  /**
   * The handler reads and checks its query and body itself, because it answers refusals in another
   * form: the OAuth endpoints (RFC 6749 §5.2, JSON or form) and the pages (an error page, and unknown
   * parameters ignored as RFC 6749 §3.1 asks).
   */
  ownRequest?: boolean;
  /** Middleware to run before the request is read (the same-origin rule of a form). */
  before?: MiddlewareHandler<SandboxEnv>[];
}

/** The declaration a mounted handler carries, read back by the document. */
export interface Mounted {
  declaration?: RouteConfig;
}

/** The schema of the JSON body a declaration checks, if any. */
function jsonSchemaOf(route: RouteConfig): z.ZodType | undefined {
  const content = route.request?.body?.content as Record<string, { schema?: unknown }> | undefined;
  return content?.['application/json']?.schema as z.ZodType | undefined;
}

/** Mounts `route` on `app`: its request checked as declared, then `handler`. */
export function openapi<const R extends RouteConfig>(
  app: Hono<SandboxEnv>,
  route: R,
  handler: (c: DeclaredContext<R>) => DeclaredAnswer<R> | Promise<DeclaredAnswer<R>>,
  options: MountOptions = {},
): void {
  const checks: MiddlewareHandler<SandboxEnv>[] = [];
  const query = route.request?.query as z.ZodType | undefined;
  if (query && !options.ownRequest)
    checks.push(checkQuery(query) as unknown as MiddlewareHandler<SandboxEnv>);
  const body = options.ownRequest ? undefined : jsonSchemaOf(route);
  if (body) checks.push(checkJsonBody(body) as unknown as MiddlewareHandler<SandboxEnv>);
  const path = route.path.replace(/\{(\w+)\}/g, ':$1');
  // A handler made for this route carries the declaration (a shared middleware could not): its first
  // check, else a pass-through (a route that reads its own request: never on the hot path).
  const declared: MiddlewareHandler<SandboxEnv> & Mounted = checks.shift() ?? ((_c, next) => next());
  declared.declaration = route;
  const chain = [
    ...(options.before ?? []),
    declared,
    ...checks,
    handler as unknown as MiddlewareHandler<SandboxEnv>,
  ] as [MiddlewareHandler<SandboxEnv>];
  app.on(route.method.toUpperCase(), path, ...chain);
}
