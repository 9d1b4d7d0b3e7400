import type { HttpBindings } from '@hono/node-server';
import type { HonoRequest } from 'hono';
import type { Principal, SandboxCore } from '../core.js';

/**
 * What every route sees: the Node request and response (`c.env.incoming`/`outgoing`), the sandbox
 * core, and what the middleware established (the caller; its rate-limit headers are set on
 * `outgoing`).
 */
export interface SandboxEnv {
  Bindings: HttpBindings;
  Variables: {
    core: SandboxCore;
    principal: Principal;
  };
}

/** What helpers take of a route's context (any route's, whatever its body and query). */
export interface RouteContext {
  /** What the middleware set (`c.get`, not `c.var`: Hono builds a new object at each `c.var`). */
  get<K extends keyof SandboxEnv['Variables']>(key: K): SandboxEnv['Variables'][K];
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  req: HonoRequest<any, any>;
  env: HttpBindings;
}
