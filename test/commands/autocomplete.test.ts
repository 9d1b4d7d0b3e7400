import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
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
});
