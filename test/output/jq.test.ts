import { describe, expect, it } from 'vitest';
import { startMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { runMktInTty } from '../support/terminal.js';

// --jq EXPR on every command with --json: jq itself (jq-wasm) filters the document the command
// prints; output as `gh --jq` gives it; a bad expression is refused before the command does anything.
const ctx = useSandbox();

describe('--jq', () => {
  it('prints strings raw, one value a line, without a jq binary', async () => {
    const who = await ctx.mkt(['whoami', '--jq', '.email'], { PATH: '/usr/bin:/bin' });
    expect(who).toMatchObject({ code: 0, stderr: '' });
    expect(who.stdout).toBe(`${ctx.sandbox.seed.developer.email}\n`);
    const users = await ctx.mkt(['simulator', 'users', 'list', '--jq', '.[] | .id']);
    expect(users.code).toBe(0);
    expect(users.stdout.split('\n').filter(Boolean).length).toBeGreaterThan(1);
    expect(users.stdout).toMatch(/^(usr_\w+\n)+$/);
  });

  it('gives null as an empty line, numbers and booleans as text, arrays and objects as compact JSON', async () => {
    const res = await ctx.mkt(['whoami', '--jq', 'null, 42, 1.5, true, [.id], {e: .email}, "a\\tb"']);
    const { id, email } = ctx.sandbox.seed.developer;
    expect(res.stdout).toBe(`\n42\n1.5\ntrue\n["${id}"]\n{"e":"${email}"}\na\tb\n`);
  });

  it('filters a check that says no: exit 3, the filtered answer on stdout, the reason on stderr', async () => {
    const fred = ctx.sandbox.seed.users.find((u) => u.plan === 'free')!;
    const res = await ctx.mkt(['entitlements', '--user', fred.id, '--feature', 'no-such', '--jq', '.plan']);
    expect(res.code).toBe(3);
    expect(res.stdout).toBe('free\n');
    expect(res.stderr).toContain('does not include "no-such"');
  });

  it('refuses a bad expression (exit 2) naming where, before the command does anything', async () => {
    const bad = await ctx.mkt(['apps', 'create', '--name', 'Never made', '--jq', '.id |'], {
      MKT_API_KEY: undefined,
      MKT_ACCESS_TOKEN: 'at_nothing',
    });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain(
      'The --jq expression is not valid: syntax error, unexpected end of file at line 1, column 5.',
    );
    // The command never ran: a request with this token would have been refused with exit 4.
    expect(bad.stderr).not.toMatch(/log ?in|token/i);
    const unknown = await ctx.mkt(['whoami', '--jq', '.email | nosuch']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('nosuch/0 is not defined at line 1, column 10.');
  });

  it('says when the expression fails on the answer (exit 1), after what it printed before', async () => {
    const res = await ctx.mkt(['whoami', '--jq', '.email, (.id | error("stop"))']);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe(`${ctx.sandbox.seed.developer.email}\n`);
    expect(res.stderr).toContain('The --jq expression failed: stop.');
  });

  it('tells an error in words on stderr, not as a JSON document in the filtered output', async () => {
    const res = await ctx.mkt(['whoami', '--jq', '.email'], { MKT_API_KEY: undefined });
    expect(res.code).toBe(4);
    expect(res.stdout).toBe('');
    expect(res.stderr).toContain('Try: mkt login');
  });

  it('on a terminal: objects indented, control characters in strings shown escaped', async () => {
    const res = await runMktInTty(['whoami', '--jq', '{id}, "\\u001b[2J"'], ctx.dir, {
      env: ctx.env,
      waitFor: '\\u001b',
      answer: '',
    });
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`{\r\n  "id": "${ctx.sandbox.seed.developer.id}"\r\n}`);
    expect(res.stdout).toContain('\\u001b[2J');
  });

  it('filters a JSON-lines stream line by line (webhooks listen)', async () => {
    const listen = startMkt(
      ['webhooks', 'listen', '--jq', 'if .type == "ready" then "ready" else "\\(.type) \\(.event)" end'],
      ctx.dir,
      { env: ctx.env, timeoutMs: 60_000 },
    );
    const said = (text: string) => (lines: Array<Record<string, unknown>>) =>
      lines.some((l) => l.text === text);
    try {
      await listen.waitFor(said('ready'));
      expect((await ctx.mkt(['trigger', 'subscription.created'])).code).toBe(0);
      await listen.waitFor(said('verified subscription.created'));
      expect(listen.stdout()).toBe('ready\nverified subscription.created\n');
    } finally {
      listen.child.kill('SIGINT');
      await listen.exit();
    }
  });
});
