import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runMkt, tempDir } from '../support/cli.js';

let home: { path: string; remove(): Promise<void> };
const cache = () => join(home.path, '.cache', 'mkt', 'autocomplete');

beforeAll(async () => {
  home = await tempDir();
  const r = await runMkt(['autocomplete', 'bash'], home.path);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('mkt autocomplete script bash');
});
afterAll(() => home.remove());

/** Asks bash's own completion machinery what it would offer after `line`. */
function bashComplete(line: string): string[] {
  const words = line.split(' ');
  const script = `
    source "${join(cache(), 'bash_setup')}"
    COMP_WORDS=(${words.map((w) => `"${w}"`).join(' ')}); COMP_CWORD=${words.length - 1}
    COMP_LINE="${line}"; COMP_POINT=\${#COMP_LINE}
    $(complete -p mkt | sed -E 's/.*-F ([^ ]+).*/\\1/')
    printf '%s\\n' "\${COMPREPLY[@]}"`;
  return execFileSync('bash', ['-c', script], { env: { ...process.env, HOME: home.path }, encoding: 'utf8' })
    .split('\n')
    .filter(Boolean);
}

describe('mkt autocomplete', () => {
  it('completes topics, commands and flags in bash', () => {
    expect(bashComplete('mkt apps ')).toEqual(
      expect.arrayContaining(['create', 'delete', 'get', 'list', 'rotate-secret', 'update', 'use']),
    );
    expect(bashComplete('mkt plans create --cur')).toEqual(['--currency']);
    expect(new Set(bashComplete('mkt web'))).toEqual(new Set(['webhooks']));
  });

  it('writes a zsh completion function that zsh accepts', async () => {
    const file = join(cache(), 'functions', 'zsh', '_mkt');
    const text = await readFile(file, 'utf8');
    for (const name of ['webhooks', 'listen', 'entitlements', 'sandbox', '--feature'])
      expect(text).toContain(name);
    execFileSync('zsh', ['-n', file]);
    const r = await runMkt(['autocomplete', 'zsh'], home.path);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('mkt autocomplete script zsh');
  });

  it('writes the completion files once per build, and again when they are gone', async () => {
    const setup = join(cache(), 'bash_setup');
    const zsh = join(cache(), 'functions', 'zsh', '_mkt');
    // Outside tests (NODE_ENV=test makes oclif warn, naming the process, which is never kept).
    const env = { NODE_ENV: undefined };
    const first = await runMkt(['autocomplete', 'bash'], home.path, { env });
    const written = [(await stat(setup)).mtimeMs, (await stat(zsh)).mtimeMs];
    const again = await runMkt(['autocomplete', 'bash'], home.path, { env });
    expect(again).toEqual(first);
    expect([(await stat(setup)).mtimeMs, (await stat(zsh)).mtimeMs]).toEqual(written);
    await rm(zsh);
    const after = await runMkt(['autocomplete', 'bash'], home.path, { env });
    expect(after).toEqual(first);
    expect((await readFile(zsh, 'utf8')).length).toBeGreaterThan(1000);
    expect((await stat(setup)).mtimeMs).toBeGreaterThan(written[0]!);
  });
});
