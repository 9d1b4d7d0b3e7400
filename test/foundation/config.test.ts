import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chmod, chown, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runMkt, tempDir } from '../support/cli.js';

let dir: { path: string; remove(): Promise<void> };
beforeEach(async () => {
  dir = await tempDir();
});
afterEach(() => dir.remove());

const mkt = (args: string[], env: Record<string, string> = {}) => runMkt(args, dir.path, { env });

describe('mkt config', () => {
  it('sets, gets, lists and unsets a setting per profile', async () => {
    expect((await mkt(['config', 'set', 'site-url', 'https://market.example.com'])).code).toBe(0);
    expect((await mkt(['config', 'set', 'app', 'app_other', '--profile', 'staging'])).code).toBe(0);
    const get = await mkt(['config', 'get', 'site-url']);
    expect(get.stdout).toBe('https://market.example.com\n');
    const list = JSON.parse((await mkt(['config', 'list', '--json'])).stdout);
    expect(list.settings.find((s: { key: string }) => s.key === 'site-url')).toMatchObject({
      value: 'https://market.example.com',
      source: 'profile',
    });
    expect(list.settings.find((s: { key: string }) => s.key === 'app')).toMatchObject({
      value: null,
      source: 'unset',
    });
    const staging = await mkt(['config', 'get', 'app'], { MKT_PROFILE: 'staging' });
    expect(staging.stdout).toBe('app_other\n');
    expect((await mkt(['config', 'unset', 'site-url'])).code).toBe(0);
    // The site URL always has a value: unset, it is the default, as `config list` shows.
    const byDefault = await mkt(['config', 'get', 'site-url']);
    expect(byDefault.code).toBe(0);
    expect(byDefault.stdout).toBe('http://127.0.0.1:7878\n');
    expect(byDefault.stderr).toContain('(from the default, the local sandbox)');
    const missing = await mkt(['config', 'get', 'client-id']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('mkt config set client-id');
  });

  it('tells where the site URL comes from: flag > environment > profile > default', async () => {
    await mkt(['config', 'set', 'site-url', 'https://profile.example']);
    const fromEnv = JSON.parse(
      (await mkt(['config', 'list', '--json'], { MKT_SITE_URL: 'https://env.example' })).stdout,
    );
    expect(fromEnv.settings[0]).toMatchObject({ value: 'https://env.example', source: 'env' });
    const fromFlag = JSON.parse(
      (
        await mkt(['config', 'list', '--json', '--site-url', 'https://flag.example'], {
          MKT_SITE_URL: 'https://env.example',
        })
      ).stdout,
    );
    expect(fromFlag.settings[0]).toMatchObject({ value: 'https://flag.example', source: 'flag' });
    const byDefault = JSON.parse((await mkt(['config', 'list', '--json', '--profile', 'fresh'])).stdout);
    expect(byDefault.settings[0]).toMatchObject({ value: 'http://127.0.0.1:7878', source: 'default' });
  });

  it('refuses unknown keys and bad values with exit 2, listing what is accepted', async () => {
    const unknown = await mkt(['config', 'set', 'colour', 'red', '--json']);
    expect(unknown.code).toBe(2);
    const err = JSON.parse(unknown.stdout).error;
    expect(err.code).toBe('unknown_config_key');
    expect(err.message).toContain('site-url, app, client-id');
    for (const bad of ['not a url', 'ftp://x.example', 'https://x.example/?q=1']) {
      const r = await mkt(['config', 'set', 'site-url', bad]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('site-url');
    }
    expect((await mkt(['config', 'set', 'app', 'myapp'])).code).toBe(2);
    await expect(stat(join(dir.path, 'config.json'))).rejects.toThrow();
  });

  it('never overwrites a corrupt config file and names it in the error', async () => {
    const file = join(dir.path, 'config.json');
    await writeFile(file, '{"profiles": {"default": {"site-url": ');
    const r = await mkt(['config', 'set', 'app', 'app_1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toContain('left as it is');
    expect(await readFile(file, 'utf8')).toBe('{"profiles": {"default": {"site-url": ');
    await writeFile(file, '{"profiles": {"default": {"site-url": 42}}}');
    const typed = await mkt(['config', 'list', '--json']);
    expect(typed.code).toBe(1);
    expect(JSON.parse(typed.stdout).error.code).toBe('config_corrupt');
  });

  it('writes the file atomically with owner-only permissions and keeps other profiles', async () => {
    await mkt(['config', 'set', 'app', 'app_a', '--profile', 'a']);
    await mkt(['config', 'set', 'app', 'app_b', '--profile', 'b']);
    const file = join(dir.path, 'config.json');
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.profiles).toEqual({ a: { app: 'app_a' }, b: { app: 'app_b' } });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('rejects a bad profile name and an unknown command with usage errors', async () => {
    expect((await mkt(['config', 'list', '--profile', '../etc'])).code).toBe(2);
    // An unknown command exits 127, as a shell does for a command it cannot find.
    const notFound = await mkt(['confgi', 'list']);
    expect(notFound.code).toBe(127);
    expect(notFound.stderr).toContain('"confgi list" is not a mkt command');
  });
});

describe('the config folder', () => {
  it('takes write access away from others, with a warning, before using a folder anyone could change', async () => {
    const folder = join(dir.path, 'shared');
    await mkdir(folder);
    await chmod(folder, 0o777);
    const r = await runMkt(['config', 'list'], folder, { env: { HOME: dir.path } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`The config folder ${folder} was writable by others (mode 777)`);
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    const again = await runMkt(['config', 'list'], folder, { env: { HOME: dir.path } });
    expect(again.stderr).not.toContain('writable by others');
  });

  it.runIf(process.getuid?.() === 0)(
    'refuses a config folder that another user owns (exit 1), changing nothing',
    async () => {
      const folder = join(dir.path, 'theirs');
      await mkdir(folder, { mode: 0o755 });
      await chown(folder, 65534, 65534);
      const r = await runMkt(['config', 'set', 'site-url', 'https://evil.example'], folder, {
        env: { HOME: dir.path },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`The config folder ${folder} belongs to another user (uid 65534)`);
      await expect(stat(join(folder, 'config.json'))).rejects.toThrow();
    },
  );
});
