import { execFile } from 'node:child_process';
import { cp, mkdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from '../support/chromium.js';
import { baseEnv, npmGlobalConfig, tempDir } from '../support/cli.js';
import { typeInTerminal, type Terminal } from '../support/terminal.js';
import { readmeCommands } from './readme-commands.js';

// The README's "Getting started" and "Signing in", followed as a person would: every command of
// their ```sh blocks, as written, typed into a terminal (bash on a pseudo-terminal) — the setup line
// in a copy of this working tree with npm's global prefix in a temporary folder, the sandbox in a
// terminal of its own — and the consent page approved in Debian's Chromium with its defaults.
// Two things differ from a person's desk, and only these: the sandbox gets `--port 0` (a free port;
// the other terminal is told it through MKT_SITE_URL), and the config folder is temporary.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = join(ROOT, 'README.md');
const CHROMIUM_PERSON = fileURLToPath(new URL('../fixtures/auth/chromium.js', import.meta.url));

let home: { path: string; remove(): Promise<void> };
let sandbox: Terminal | undefined;

beforeAll(async () => {
  home = await tempDir('mkt-readme-');
});
afterAll(async () => {
  sandbox?.type('\u0003'); // Ctrl-C, as in terminal 1
  await sandbox?.exit;
  await home.remove();
});

/** The working tree as a fresh clone would have it: tracked and new files, nothing ignored. */
async function copyOfWorkingTree(to: string): Promise<void> {
  const { stdout } = await promisify(execFile)(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
  );
  for (const file of stdout.split('\0').filter(Boolean)) {
    await mkdir(dirname(join(to, file)), { recursive: true });
    await cp(join(ROOT, file), join(to, file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err; // deleted in the working tree, not yet committed
    });
  }
}

describe.skipIf(!hasChromium())('the README, followed as written', () => {
  it('Getting started and Signing in work exactly as the README says', async () => {
    const commands = [...readmeCommands(README, 'Getting started'), ...readmeCommands(README, 'Signing in')];
    expect(commands).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^mkt sandbox start$/),
        expect.stringMatching(/^mkt login .*--scope apps:write/),
        'mkt whoami',
        'mkt apps list',
      ]),
    );

    const clone = join(home.path, 'mkt');
    const prefix = join(home.path, 'npm-global');
    const config = join(home.path, 'config');
    await Promise.all([copyOfWorkingTree(clone), mkdir(prefix), mkdir(config)]);
    // npm's own variables from the test runner's `npm exec` stay out: the person runs npm afresh.
    const env = Object.fromEntries(Object.entries(baseEnv(config)).filter(([k]) => !/^npm_/i.test(k)));
    Object.assign(env, {
      PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}:${process.env.PATH}`,
      npm_config_prefix: prefix,
      npm_config_globalconfig: npmGlobalConfig(),
      npm_config_update_notifier: 'false',
      npm_config_cache: join(userInfo().homedir, '.npm'), // the person's npm cache
      TERM: 'xterm',
      MKT_BROWSER: `"${process.execPath}" "${CHROMIUM_PERSON}"`,
      PERSON_LOG: join(home.path, 'person.log'),
    });

    const seed: Record<string, string> = {};
    for (const line of commands) {
      if (line.startsWith('mkt sandbox start')) {
        sandbox = typeInTerminal(`${line} --port 0`, { cwd: home.path, env, timeoutMs: 600_000 });
        for (const [name, pattern] of Object.entries({
          site: /Site URL:\s+(\S+)/,
          developer: /Developer:\s+.*<(\S+)>/,
          app: /App:\s+.*\((app_\w+)\)/,
          clientId: /Client ID:\s+(cid_\w+)/,
          clientSecret: /Client secret:\s+(cs_\S+)/,
        }))
          seed[name] = (await sandbox.waitFor(pattern))[1]!;
        env.MKT_SITE_URL = seed.site!;
        continue;
      }
      // What a person copies from the sandbox's output into the placeholders.
      const typed = line.replace(/cid_…/g, seed.clientId ?? 'cid_…');
      const terminal = typeInTerminal(typed, {
        cwd: line.includes('npm ') ? clone : home.path,
        env,
        answers: [[/Client secret of cid_\w+/, `${seed.clientSecret}\r`]],
        timeoutMs: 300_000,
      });
      const code = await terminal.exit;
      const screen = terminal.screen();
      expect(code, `${typed}\n${screen}`).toBe(0);
      if (seed.clientSecret) expect(screen, typed).not.toContain(seed.clientSecret);
      if (line === 'mkt whoami') expect(screen).toContain(seed.developer);
      if (line === 'mkt apps list') expect(screen).toContain(seed.app);
      if (line === 'mkt auth status')
        expect(screen).toMatch(/identity:read.*apps:write|apps:write.*identity:read/s);
    }
  }, 900_000);
});
