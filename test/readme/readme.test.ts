import { execFile } from 'node:child_process';
import { access, cp, mkdir, readFile, symlink } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasChromium } from '../support/chromium.js';
import { baseEnv, npmGlobalConfig, tempDir } from '../support/cli.js';
import { typeInTerminal, type Terminal } from '../support/terminal.js';
import { docPath, docSection, readmeCommands } from './readme-commands.js';

// The README followed as a person would, from the top to the end of its tour, then the Accounts
// part of docs/signing-in.md: every command of their ```sh blocks, as written, typed into a terminal
// (bash on a pseudo-terminal) — the setup lines in a copy of this working tree with npm's global
// prefix in a temporary folder, the sandbox and the webhook listener each in a terminal of their own —
// and the consent page approved in Debian's Chromium with its defaults. Three things differ from a
// person's desk, and only these: the sandbox gets `--port 0` (a free port; the other terminals are
// told it through MKT_SITE_URL), the config and data folders are temporary, and the tour's first
// line, `npm ci`, is not typed a second time: CI's own first step is that `npm ci`, in a fresh clone
// of this repository with the same lock file and npm cache (scripts/test-everything.sh, checked
// below), and the copy is given the node_modules it made. The build and all that follows run in the
// copy, which holds what a clone would (nothing ignored: no build/, dist/ or node_modules of its own).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = join(ROOT, 'README.md');
const SIGNING_IN = docPath('docs/signing-in.md');
const CHROMIUM_PERSON = fileURLToPath(new URL('../fixtures/auth/chromium.js', import.meta.url));

let home: { path: string; remove(): Promise<void> };
let sandbox: Terminal | undefined;
let listener: Terminal | undefined;

beforeAll(async () => {
  home = await tempDir('mkt-readme-');
});
afterAll(async () => {
  for (const terminal of [listener, sandbox]) {
    terminal?.type('\u0003'); // Ctrl-C, as in their terminals
    await terminal?.exit;
  }
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

describe('the README, top to bottom', () => {
  it('opens with the two commands, the second being what CI runs', async () => {
    expect(readmeCommands(README, 'Two commands')).toEqual([
      'npm ci && npm run demo',
      './scripts/test-everything.sh',
    ]);
    const ci = await readFile(join(ROOT, '.ci/run'), 'utf8');
    expect(ci.trim().split('\n').at(-1)).toBe('exec ./scripts/test-everything.sh');
    // Install lines that work today: no registry name that answers 404.
    expect(docSection(README, 'Install')).not.toMatch(/^\s*npm install -g mkt\s*$/m);
    expect(readmeCommands(README, 'Install')).toContain('npm install -g ./mkt-0.1.0.tgz');
  });

  it("opens its tour with `npm ci`, which CI runs first in its fresh clone (the tour's copy reuses it)", async () => {
    expect(readmeCommands(README, 'A five-minute tour')[0]).toBe('npm ci');
    // The same command (npm's audit and funding reports left out), in the checkout's root, as CI's
    // first step after the Debian packages (beside the Node versions' own), before the build and tests.
    const script = await readFile(join(ROOT, 'scripts/test-everything.sh'), 'utf8');
    const steps = script.split('\n').filter((line) => /^(npm|node|\.\/|exec )/.test(line));
    expect(steps[0]).toMatch(/^npm ci --prefix test\/package\/node-versions /);
    expect(steps[1]).toBe('npm ci --no-audit --no-fund');
  });

  it('links only to files that exist', async () => {
    const text = await readFile(README, 'utf8');
    const links = [...text.matchAll(/\]\(([^)#]+)(#[^)]*)?\)/g)].map((m) => m[1]!);
    expect(links.length).toBeGreaterThan(8);
    for (const link of links) await expect(access(join(ROOT, link)), link).resolves.toBeUndefined();
  });
});

describe.skipIf(!hasChromium())('the README, followed as written', () => {
  it('the tour, then Accounts, work exactly as written, in order, from a fresh clone', async () => {
    const tour = readmeCommands(README, 'A five-minute tour');
    const commands = [...tour, ...readmeCommands(SIGNING_IN, 'Accounts')];
    // mkt is on the PATH before it is used, and the sign-in comes before what needs it.
    const first = (pattern: RegExp) => tour.findIndex((line) => pattern.test(line));
    expect(first(/^npm link$/)).toBeGreaterThanOrEqual(0);
    expect(first(/^npm link$/)).toBeLessThan(first(/^mkt /));
    expect(first(/^mkt login .*--scope apps:write/)).toBeLessThan(first(/^mkt whoami$/));
    expect(first(/^mkt apps use app_…$/)).toBeLessThan(first(/^mkt webhooks listen$/));
    expect(first(/^mkt webhooks listen$/)).toBeLessThan(first(/^mkt trigger /));
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
      if (line === 'npm ci') {
        // CI's own first step (above): the copy gets what it installed, as `npm ci` would lay it.
        await symlink(join(ROOT, 'node_modules'), join(clone, 'node_modules'));
        continue;
      }
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
      if (line === 'mkt webhooks listen') {
        listener = typeInTerminal(line, { cwd: home.path, env, timeoutMs: 600_000 });
        await listener.waitFor(/Ready\./);
        continue;
      }
      // What a person copies from the sandbox's output into the placeholders.
      const typed = line.replace(/cid_…/g, seed.clientId ?? 'cid_…').replace(/app_…/g, seed.app ?? 'app_…');
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
      if (line === 'mkt --version') expect(screen).toMatch(/^mkt\/\d+\.\d+\.\d+ /m);
      if (line.startsWith('mkt trigger subscription.created')) {
        // The listener in its own terminal prints the delivery, signature checked.
        const id = /dlv_\w+/.exec(screen)![0];
        expect(
          (await listener!.waitFor(new RegExp(`subscription\\.created\\s+${id}.*signature:valid`)))[0],
        ).toBeTruthy();
      }
      if (line === 'mkt webhooks deliveries') expect(screen).toMatch(/subscription\.created/);
      if (line === 'mkt auth status')
        expect(screen).toMatch(/identity:read.*apps:write|apps:write.*identity:read/s);
    }
  }, 900_000);
});
