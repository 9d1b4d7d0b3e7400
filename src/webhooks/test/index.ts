// `mkt webhooks test`: sends the battery to a handler, one case after another, and grades each answer.
import type { Deps } from '../../deps.js';
import { UnreachableError } from '../../errors.js';
import type { CaseResult } from './grade.js';

/** Where the guide to a handler that passes is. */
export const HANDLER_GUIDE = 'docs/webhooks.md, "Your webhook handler"';

/** What `mkt webhooks test` was asked to do. */
export interface HandlerTestInput {
  target: URL;
  /** Whose stored secret to use, and the app the payloads name. */
  app?: string;
  /** The variable holding the secret (--secret-env). */
  secretEnv?: string;
  /** The handler's timestamp tolerance, in seconds. */
  toleranceS: number;
  /** The marketplace's delivery timeout, in ms: each answer's time is graded against it. */
  timeoutMs: number;
  /** How long, in ms, a handler that refuses connections is waited for before the first case (it may be starting). */
  waitMs: number;
  /** Aborted to stop between cases (Ctrl-C). */
  signal?: AbortSignal;
}

/** The graded battery: the JSON document of `mkt webhooks test --json`. */
export interface HandlerReport {
  target: string;
  /** Where the signing secret came from (never the secret). */
  secret_source: string;
  app_id: string | null;
  tolerance_s: number;
  delivery_timeout_ms: number;
  passed: number;
  failed: number;
  ok: boolean;
  guide: string;
  cases: CaseResult[];
}

/** How much of an answer's text the report keeps. */
const ANSWER_CHARS = 300;

/** Sends every case of the battery to `input.target` in order and grades the answers. */
export async function testHandler(deps: Deps, input: HandlerTestInput): Promise<HandlerReport> {
  const { resolveWebhookSecret } = await import('../secret.js');
  const { forwardTo } = await import('../forward.js');
  const { redactUrl } = await import('../../api/redact.js');
  const { battery } = await import('./battery.js');
  const { grade } = await import('./grade.js');
  const { newId } = await import('./payloads.js');
  const { secret, source, appId } = await resolveWebhookSecret(deps, {
    app: input.app,
    secretEnv: input.secretEnv,
  });
  const app = appId ?? input.app;
  const cases = battery({
    secret,
    appId: app ?? newId('app', 8),
    now: deps.clock.now(),
    toleranceS: input.toleranceS,
  });
  const target = redactUrl(input.target.href);
  const send = forwardTo(input.target, { timeoutMs: input.timeoutMs });
  const results: CaseResult[] = [];
  try {
    for (const c of cases) {
      input.signal?.throwIfAborted();
      const answers = [];
      for (const r of c.requests) {
        let a = await send(r.body, r.headers);
        // Before the first answer, a refused connection is a handler still starting (`node app & mkt
        // webhooks test` in one CI step): tried again until it listens or the wait is over.
        const until = deps.clock.now() + input.waitMs;
        while (results.length === 0 && a.error === 'ECONNREFUSED') {
          if (deps.clock.now() >= until)
            throw new UnreachableError(
              `Nothing answers at ${target} (the connection was refused${input.waitMs ? ` for ${input.waitMs / 1000} s` : ''}).`,
              { hints: ['start your handler first, then: mkt webhooks test --forward-to PORT'] },
            );
          await deps.clock.sleep(100, input.signal);
          a = await send(r.body, r.headers);
        }
        answers.push({ status: a.status, error: a.error, ms: a.ms, excerpt: a.excerpt });
      }
      const result = grade(c, answers, input.timeoutMs);
      if (result.answer !== null && result.answer.length > ANSWER_CHARS)
        result.answer = `${result.answer.slice(0, ANSWER_CHARS - 1)}…`;
      results.push(result);
    }
  } finally {
    await send.close();
  }
  const failed = results.filter((r) => r.verdict === 'fail').length;
  return {
    target,
    secret_source: source,
    app_id: app ?? null,
    tolerance_s: input.toleranceS,
    delivery_timeout_ms: input.timeoutMs,
    passed: results.length - failed,
    failed,
    ok: failed === 0,
    guide: HANDLER_GUIDE,
    cases: results,
  };
}
