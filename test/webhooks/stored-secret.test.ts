import { createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendRecord } from '../../src/webhooks/journal.js';
import { JournalLock } from '../../src/platform/lock-file.js';
import { runMkt } from '../support/cli.js';
import { useSandbox } from '../support/sandbox.js';
import { spawnListen } from './helpers.js';

// The webhook signing secret is found where `mkt apps rotate-secret` and `mkt webhooks listen` said
// they stored it, for the app the one rule picks; `mkt webhooks resend` hints only what works.

const ctx = useSandbox({ dirPerTest: true });

/** A body signed with `secret` as the marketplace signs it, written to the config folder. */
async function signedBody(secret: string): Promise<{ file: string; signature: string }> {
  const body = JSON.stringify({
    event: 'subscription.created',
    timestamp: new Date().toISOString(),
    data: {},
  });
  const file = join(ctx.dir, 'body.json');
  await writeFile(file, body);
  return { file, signature: `sha256=${createHmac('sha256', secret).update(body).digest('hex')}` };
}

describe('webhooks verify finds the stored secret', () => {
  it('after apps rotate-secret --kind webhook: the API key’s app, --app, the profile’s app; says where on stderr only', async () => {
    const app = ctx.sandbox.seed.app.id;
    const rotated = await ctx.mkt(['apps', 'rotate-secret', '--kind', 'webhook', '--yes']);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stderr).toContain('stored in the credential store');
    const { file, signature } = await signedBody(rotated.stdout.trim());

    const byKey = await ctx.mkt(['webhooks', 'verify', '--signature', signature, '--payload', file]);
    expect(byKey.code, byKey.stderr).toBe(0);
    expect(byKey.stderr).toContain(`signing secret from the credential store (${app})`);
    const json = await ctx.mkt(['webhooks', 'verify', '--signature', signature, '--payload', file, '--json']);
    expect(json.code).toBe(0);
    expect(json.stdout).not.toContain('credential store');
    expect(json.stderr).toBe('');

    // No credential at all: --app names the app, else the profile's default app.
    const offline = { MKT_API_KEY: undefined };
    const named = await ctx.mkt(
      ['webhooks', 'verify', '--app', app, '--signature', signature, '--payload', file],
      offline,
    );
    expect(named.code, named.stderr).toBe(0);
    const none = await ctx.mkt(['webhooks', 'verify', '--signature', signature, '--payload', file], offline);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No webhook signing secret');
    expect(none.stderr).not.toContain('pass --secret-env NAME or set MKT_WEBHOOK_SECRET. ');
    expect((await ctx.mkt(['config', 'set', 'app', app], offline)).code).toBe(0);
    const byProfile = await ctx.mkt(
      ['webhooks', 'verify', '--signature', signature, '--payload', file],
      offline,
    );
    expect(byProfile.code, byProfile.stderr).toBe(0);

    // An explicit variable comes first, even over a stored secret.
    const explicit = await ctx.mkt(['webhooks', 'verify', '--signature', signature, '--payload', file], {
      MKT_WEBHOOK_SECRET: 'whsec_notThatOne',
    });
    expect(explicit.code).toBe(3);
    expect(explicit.stderr).toContain('from $MKT_WEBHOOK_SECRET');
  });

  it('after webhooks listen read the secret from the marketplace, verify finds it stored', async () => {
    // (The earlier test rotated the secret: what listen read is the current one.)
    const listen = spawnListen(['--port', '0', '--print-secret'], ctx.dir, ctx.env);
    let fetched: string;
    try {
      await listen.waitFor((lines) => lines.some((l) => l.type === 'ready'));
      const line = listen.lines.find((l) => l.type === 'secret')!;
      expect(line.source).toBe('marketplace');
      fetched = String(line.secret);
    } finally {
      listen.child.kill('SIGINT');
      await listen.exit();
    }
    const { file, signature } = await signedBody(fetched);
    const verify = await ctx.mkt(['webhooks', 'verify', '--signature', signature, '--payload', file]);
    expect(verify.code, verify.stderr).toBe(0);
    expect(verify.stderr).toContain('the credential store');
  });
});

describe('webhooks resend hints only what works', () => {
  const at = () => new Date().toISOString();
  const failing = (argv: string[]) => ['mkt', ...argv].join(' ');
  async function journal(appId: string, id: string, status: 'failed' | 'received') {
    const dir = join(ctx.dir, 'data', 'webhooks', appId);
    const headers = { 'x-marketplace-signature': 'sha256=00', 'x-marketplace-delivery': id };
    await appendRecord(dir, {
      t: 'received',
      id,
      at: at(),
      source: 'relay',
      event: 'user.revoked',
      headers,
      body: '{}',
    });
    // A forward target nobody listens on (port 9, discard: refused on loopback).
    const forward_to = 'http://127.0.0.1:9/webhooks';
    if (status === 'failed')
      await appendRecord(dir, { t: 'status', id, at: at(), status, error: 'refused', forward_to });
    return dir;
  }
  async function hintsOf(argv: string[]) {
    const res = await runMkt([...argv, '--json'], ctx.dir);
    expect(res.code, res.stderr).not.toBe(0);
    const hints = (JSON.parse(res.stdout) as { error: { hints: string[] } }).error.hints;
    for (const hint of hints) {
      const command = hint.split('   (')[0]!;
      expect(command).not.toBe(failing(argv));
      expect(command).not.toMatch(/APP_ID|dlv_123|\bID\b|\bURL\b/);
    }
    return hints;
  }

  it('a delivery in another app’s journal, a pending one, a failed forward, no id', async () => {
    await journal('app_mine', 'dlv_failed', 'failed');
    await journal('app_other', 'dlv_elsewhere', 'failed');
    const missing = await hintsOf(['webhooks', 'resend', 'dlv_elsewhere', '--app', 'app_mine']);
    expect(missing).toContain('mkt webhooks deliveries --app app_mine   (the deliveries this journal holds)');
    expect(missing.join('\n')).toContain('mkt webhooks resend dlv_elsewhere --app app_other');

    const all = await hintsOf(['webhooks', 'resend', '--status', 'failed', '--app', 'app_mine']);
    expect(all.join('\n')).toContain('mkt webhooks deliveries --status failed --app app_mine');
    const one = await hintsOf(['webhooks', 'resend', 'dlv_failed', '--app', 'app_mine']);
    expect(one.join('\n')).not.toContain('mkt webhooks resend');
    await hintsOf(['webhooks', 'resend', '--app', 'app_mine']);

    // A delivery a running listener still forwards: wait for it, not the same command again.
    const dir = await journal('app_mine', 'dlv_pending', 'received');
    const lock = await JournalLock.acquire(dir, {
      forwardTo: 'http://127.0.0.1:9/webhooks',
      app: 'app_mine',
      warn: () => undefined,
    });
    try {
      const pending = await hintsOf(['webhooks', 'resend', 'dlv_pending', '--app', 'app_mine']);
      expect(pending.join('\n')).not.toContain('mkt webhooks resend dlv_pending');
    } finally {
      await lock.release();
    }
  });
});
