import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMkt, tempDir } from '../support/cli.js';

// Help as a newcomer reads it: where to start, examples everywhere, one style for every flag.

interface ManifestCommand {
  id: string;
  summary?: string;
  examples?: unknown[];
  pluginName?: string;
  flags: Record<string, { description?: string }>;
  args: Record<string, { description?: string }>;
}

let dir: { path: string; remove(): Promise<void> };
let commands: ManifestCommand[];
beforeAll(async () => {
  dir = await tempDir();
  const manifest = JSON.parse(await readFile(new URL('../../oclif.manifest.json', import.meta.url), 'utf8'));
  // mkt's own commands: oclif's help and autocomplete, bundled into the manifest, keep oclif's text.
  commands = Object.values<ManifestCommand>(manifest.commands).filter(
    (c) => !/^(help|autocomplete)(:|$)/.test(c.id),
  );
});
afterAll(() => dir.remove());

const help = async (args: string[]) => {
  const res = await runMkt([...args, '--help'], dir.path, { env: { OCLIF_COLUMNS: '200' } });
  expect(res.code, res.stderr).toBe(0);
  return res.stdout;
};

describe('mkt --help', () => {
  it('opens with the three commands to start with, each with its own summary', async () => {
    const lines = (await help([])).split('\n');
    expect(lines[0]).toBe('START HERE');
    const summary = (id: string) => commands.find((c) => c.id === id)!.summary!;
    expect(lines.slice(1, 4).map((l) => l.trim().split(/\s{2,}/))).toEqual([
      ['mkt sandbox start', summary('sandbox:start')],
      ['mkt login', summary('login')],
      ['mkt whoami', summary('whoami')],
    ]);
  });
});

describe('topic help', () => {
  it('ends with examples for every topic, the first example of each of its commands', async () => {
    const topics = [
      ...new Set(
        commands.flatMap((c) =>
          c.id
            .split(':')
            .slice(0, -1)
            .map((_, i, parts) => parts.slice(0, i + 1).join(':')),
        ),
      ),
    ];
    expect(topics).toEqual(
      expect.arrayContaining(['apps', 'plans', 'keys', 'simulator', 'simulator:users', 'webhooks']),
    );
    for (const topic of topics) {
      const text = await help(topic.split(':'));
      const examples = text.split('\nEXAMPLES\n')[1];
      expect(examples, `mkt ${topic} --help`).toBeDefined();
      for (const c of commands.filter((c) => c.id.startsWith(`${topic}:`))) {
        const first = String(c.examples![0]).split('\n').at(-1)!.replace('<%= config.bin %>', 'mkt');
        expect(examples, `mkt ${topic} --help`).toContain(`$ ${first}`);
      }
    }
  }, 120_000);
});

describe('command help', () => {
  it('every command has examples', () => {
    for (const c of commands) expect(c.examples?.length, c.id).toBeGreaterThan(0);
  });

  it('every flag and argument is described in one style: a lowercase phrase (or an acronym), no full stop', () => {
    for (const c of commands)
      for (const [name, f] of [...Object.entries(c.flags), ...Object.entries(c.args)])
        expect(f.description ?? '', `${c.id} ${name}`).toMatch(/^(?:[a-z$"-]|[A-Z][A-Z]|OAuth\b).*[^.]$/s);
  });

  it('describes the global --json like the other global flags', async () => {
    const text = await help(['plans', 'list']);
    expect(text).toMatch(/^ {2}--json\s+print the result as JSON on stdout \(errors too\)$/m);
    expect(text).not.toContain('Format output as json');
  });
});
