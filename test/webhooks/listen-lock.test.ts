import { mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { runMkt } from '../support/cli.js';
import { useListenContext } from './listen-context.js';

// mkt webhooks listen, part 3: one listener per journal (the setup: listen-context.ts).
const t = useListenContext();
const { fx, env, app, listen, ready, send, journalFolder, lockFile, exists, forwardedIds, accepted } = t;

describe('mkt webhooks listen', () => {
  describe('one listener per journal', () => {
    it('refuses a second listen while the first runs; deliveries and resend keep working', async () => {
      const first = listen();
      await ready(first);
      const held = JSON.parse(await readFile(lockFile(), 'utf8'));
      expect(held).toMatchObject({ pid: first.child.pid, forward_to: fx.target.url });
      const second = await runMkt(
        ['webhooks', 'listen', '--app', app(), '--forward-to', fx.target.url],
        fx.dir,
        {
          env: env(),
          timeoutMs: 20_000,
        },
      );
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`pid ${first.child.pid}`);
      expect(second.stderr).toContain(journalFolder());
      expect(second.stderr).toContain(`mkt webhooks deliveries --app ${app()}`);
      const json = await runMkt(['webhooks', 'listen', '--app', app(), '--json'], fx.dir, {
        env: env(),
        timeoutMs: 20_000,
      });
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: 'listener_running' } });
      // The refused ones left the lock alone.
      expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toEqual(held);

      const id = await send('subscription.created');
      await first.waitFor(() => forwardedIds(first).includes(id));
      const list = await runMkt(['webhooks', 'deliveries', '--app', app(), '--json'], fx.dir, {
        env: env(),
      });
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout)).toMatchObject([{ id, status: 'forwarded' }]);
      const resend = await runMkt(['webhooks', 'resend', id, '--app', app(), '--json'], fx.dir, {
        env: env(),
      });
      expect(resend.code).toBe(0);
      expect(accepted()).toEqual([id, id]);

      // A delivery the listener is still retrying is its own: resend refuses it until it is settled.
      fx.target.setDown(true);
      const pending = await send('user.authorized');
      await new Promise<void>((resolve) => {
        const t = setInterval(() => fx.target.received.length >= 3 && (clearInterval(t), resolve()), 10);
      });
      const early = await runMkt(['webhooks', 'resend', pending, '--app', app()], fx.dir, { env: env() });
      expect(early.code).toBe(1);
      expect(early.stderr).toContain(`pid ${first.child.pid}`);
      fx.target.setDown(false);
      await first.waitFor(() => forwardedIds(first).includes(pending));
      expect(accepted()).toEqual([id, id, pending]);

      // The journal the listener writes on holds the resend's line whole, and reopens cleanly.
      first.child.kill('SIGINT');
      expect(await first.exit()).toEqual({ code: 130, signal: null });
      expect(await exists(lockFile())).toBe(false);
      expect(first.stderr()).not.toMatch(/unreadable|partly written/);
      const again = listen();
      await ready(again);
      expect(again.stderr()).not.toMatch(/unreadable|partly written|Took over/);
    });

    it('takes over the lock a killed listen left behind', async () => {
      const first = listen();
      await ready(first);
      first.child.kill('SIGKILL');
      await first.exit();
      expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: first.child.pid });
      const second = listen();
      await ready(second);
      expect(second.stderr()).toContain(`Took over the journal lock of process ${first.child.pid}`);
      expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: second.child.pid });
      const id = await send('subscription.created');
      await second.waitFor(() => forwardedIds(second).includes(id));
      expect(accepted()).toEqual([id]);
      second.child.kill('SIGTERM');
      expect(await second.exit()).toEqual({ code: 143, signal: null });
      expect(await exists(lockFile())).toBe(false);
    });

    it.runIf(process.platform === 'linux')(
      'takes over a lock whose pid now belongs to another process, and an empty one left by a listener that died starting',
      async () => {
        await mkdir(journalFolder(), { recursive: true });
        // This test's own process is alive, but started long after the lock was written: the pid was reused.
        const reused = {
          pid: process.pid,
          started_at: '2020-01-01T00:00:00.000Z',
          host: hostname(),
          forward_to: null,
        };
        await writeFile(lockFile(), JSON.stringify(reused));
        let l = listen();
        await ready(l);
        expect(l.stderr()).toContain(`Took over the journal lock of process ${process.pid}`);
        l.child.kill('SIGINT');
        await l.exit();
        await writeFile(lockFile(), '');
        const old = new Date(Date.now() - 60_000);
        await utimes(lockFile(), old, old);
        l = listen();
        await ready(l);
        expect(l.stderr()).toContain('Took over the journal lock');
        expect(JSON.parse(await readFile(lockFile(), 'utf8'))).toMatchObject({ pid: l.child.pid });
      },
    );
  });
});
