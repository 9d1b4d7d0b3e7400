import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { baseEnv, tempDir } from '../support/cli.js';
import { docSection } from './readme-commands.js';

// docs/sandbox.md's "Test your app against the sandbox in CI", run as written: its fixtures file and test
// suite make a small app; the GitHub Actions job's `run:` steps (the `uses:` steps are GitHub's:
// checkout and Node) and the shell script run in it, with mkt installed by the job's own step from
// this checkout (MKT_PACKAGE set to it in place of the registry name) into a private npm prefix.

const root = fileURLToPath(new URL('../..', import.meta.url));
const section = docSection(join(root, 'docs/sandbox.md'), 'Test your app against the sandbox in CI');
const block = (lang: string) => new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``).exec(section)![1]!;

let dir: { path: string; remove(): Promise<void> };
let app: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = await tempDir('mkt-ci-');
  app = join(dir.path, 'app');
  await mkdir(join(app, 'test'), { recursive: true });
  await writeFile(join(app, 'sandbox-fixtures.json'), block('json'));
  await writeFile(join(app, 'test', 'entitlements.test.mjs'), block('js'));
  await writeFile(
    join(app, 'package.json'),
    '{ "name": "app", "private": true, "scripts": { "test": "node --test" } }\n',
  );
  await writeFile(
    join(app, 'package-lock.json'),
    '{ "name": "app", "lockfileVersion": 3, "requires": true, "packages": { "": { "name": "app" } } }\n',
  );
  const prefix = join(dir.path, 'npm-prefix');
  env = {
    ...baseEnv(dir.path),
    PATH: [join(prefix, 'bin'), dirname(process.execPath), process.env.PATH].join(':'),
    npm_config_prefix: prefix,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
});
afterAll(() => dir?.remove());

const run = (script: string, extra: Record<string, string> = {}) =>
  spawnSync('bash', ['-e', '-c', script], {
    cwd: app,
    env: { ...env, ...extra },
    encoding: 'utf8',
    timeout: 120_000,
  });

describe("the sandbox guide's CI examples", () => {
  it("runs the GitHub Actions job's steps as written", () => {
    const workflow = parse(block('yaml')) as {
      jobs: Record<string, { env: Record<string, string>; steps: Array<{ run?: string; uses?: string }> }>;
    };
    const job = Object.values(workflow.jobs)[0]!;
    const steps = job.steps.filter((s) => s.run !== undefined).map((s) => s.run!);
    expect(steps).toHaveLength(3);
    expect(steps.at(-1)).toMatch(/^mkt sandbox exec /);
    for (const step of steps) {
      const result = run(step, { ...job.env, MKT_PACKAGE: root });
      expect(result.status, `${step}\n${result.stdout}\n${result.stderr}`).toBe(0);
      if (step.startsWith('mkt sandbox exec')) {
        expect(result.stdout).toMatch(/# pass 1\n/);
        expect(result.stdout).toMatch(/# fail 0\n/);
      }
    }
    expect(readFileSync(join(app, 'sandbox.log'), 'utf8')).toMatch(/GET \/api\/v1\/entitlements 200/);
  }, 90_000);

  it('runs the shell script as written, and leaves no sandbox running', () => {
    const result = run(block('sh'));
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout.match(/# pass 1\n/g)).toHaveLength(2);
    expect(existsSync(join(app, '.sandbox', 'running.json'))).toBe(false);
    expect(run('mkt sandbox status --data-dir .sandbox').status).toBe(3);
  }, 90_000);
});
