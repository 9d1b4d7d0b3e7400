import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { honoPatches } from '../../src/platform/hono-patches.js';
import { idOrder, oclifPatches, renderTemplate, textWidth } from '../../src/platform/oclif-patches.js';

// The bundle replaces two of oclif's steps (esbuild.config.js): these must give what oclif's own
// give — ICU's localeCompare for sorting command ids, ejs for help texts — for every input.

// ejs and string-width as oclif itself loads them (its own versions).
const require = createRequire(createRequire(import.meta.url).resolve('@oclif/core'));
const ejs = require('ejs') as { render(t: string, data: object): string };
const stringWidth = require('string-width') as (text: unknown) => number;
const manifest = JSON.parse(readFileSync(new URL('../../oclif.manifest.json', import.meta.url), 'utf8')) as {
  commands: Record<
    string,
    { summary?: string; description?: string; examples?: Array<string | { command: string }> }
  >;
};

describe('idOrder', () => {
  /** The pairs idOrder's comparator orders otherwise than localeCompare. */
  const differing = (pairs: Array<[string, string]>) => {
    const compare = idOrder();
    return pairs.filter(([a, b]) => Math.sign(compare(a, b)) !== Math.sign(a.localeCompare(b)));
  };

  it('orders every pair of command ids as localeCompare does', () => {
    const ids = Object.keys(manifest.commands);
    expect(differing(ids.flatMap((a) => ids.map((b): [string, string] => [a, b])))).toEqual([]);
  });

  it('orders any ids of its alphabet as localeCompare does, and other strings by localeCompare', () => {
    const alphabet = ['a', 'b', 'h', 'c', 'z', '0', '9', '-', ':'];
    let words = [''];
    for (let length = 0; length < 3; length++)
      words = [...words, ...words.flatMap((w) => alphabet.map((c) => w + c))];
    words = [...new Set(words)];
    expect(differing(words.flatMap((a) => words.map((b): [string, string] => [a, b])))).toEqual([]);
    expect(
      differing([
        ['Apps', 'apps'],
        ['a_b', 'a-b'],
        ['é', 'e'],
        ['a b', 'a:b'],
      ]),
    ).toEqual([]);
  });
});

describe('renderTemplate', () => {
  const context = { config: { bin: 'mkt', name: `<a & 'b' "c">`, nothing: undefined }, id: 'apps:list' };
  const same = (text: string, ctx: Record<string, unknown> = context) => {
    const ours = attempt(() => renderTemplate(text, ctx, () => ejs.render(text, ctx)));
    expect({ text, ...ours }).toEqual({ text, ...attempt(() => ejs.render(text, ctx)) });
  };

  it('renders every summary, description and example of every command as ejs does', () => {
    for (const c of Object.values(manifest.commands))
      for (const text of [c.summary, c.description, ...(c.examples ?? [])])
        if (text !== undefined) same(typeof text === 'string' ? text : text.command);
  });

  it('renders plain text, escaped values and everything else as ejs does', () => {
    for (const text of [
      '',
      'plain text\nover lines\r\n',
      '100% done',
      'a %> b',
      '<%% literal %%>',
      '<%= config.bin %> apps list',
      '<%=config.bin%> and <%=  id  %>',
      '<%= config.name %>',
      '<%= config.nothing %>!',
      '<%= config.nothing.deeper %>',
      '<%= missing %>',
      '<%- config.name %>',
      '<%# a comment %>x',
      '<% if (id) { %>yes<% } %>',
      '<%_ id _%> and <%= id -%>\nnext',
      '<%= config.bin',
      '\\ "quoted" \\n',
    ])
      same(text);
    // Options ejs takes from the context change how it reads the text.
    same('<?= config.bin ?> <%= id %>', { ...context, delimiter: '?' });
  });
});

describe('textWidth', () => {
  // Every printable ASCII character, controls, escapes (ESC and CSI), wide and combining characters.
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('');
  const texts = [
    '',
    ascii,
    'mkt apps list --json',
    '\u001b[1mbold\u001b[22m text',
    '\u009b31mred',
    'tab\there\nnew line\r',
    'caf\u00e9 \u2714 \u4f60\u597d e\u0301 \u{1f600} #\ufe0f\u20e3',
    '\u007f\u0085',
  ];
  for (let i = 0; i < 500; i++)
    texts.push(
      Array.from({ length: i % 40 }, (_, j) => String.fromCharCode((i * 31 + j * 7) % 160)).join(''),
    );

  it('measures as string-width does', () => {
    expect(texts.filter((t) => textWidth(stringWidth, t) !== stringWidth(t))).toEqual([]);
    expect([textWidth(stringWidth, undefined), textWidth(stringWidth, 42)]).toEqual([0, 0]);
  });
});

/** What a call returns, or the error it throws. */
function attempt(f: () => string): { value?: string; error?: string } {
  try {
    return { value: f() };
  } catch (err) {
    return { error: String((err as Error).constructor.name) };
  }
}

describe("oclif's colour check", () => {
  it('says what supports-color says whenever stdout is no terminal, FORCE_COLOR or a --color flag or not', () => {
    // Each case in a process of its own (supports-color reads argv and the environment on load),
    // with stdout a pipe: the patched check and oclif's own, side by side.
    const own = join(
      dirname(createRequire(import.meta.url).resolve('@oclif/core')),
      'ux',
      'supports-color.js',
    );
    const program = `const { colorOffTerminal } = require(${JSON.stringify(fileURLToPath(new URL('../../build/platform/oclif-patches.js', import.meta.url)))});
const { supportsColor } = require(${JSON.stringify(own)});
process.stdout.write(JSON.stringify([colorOffTerminal(supportsColor), supportsColor()]));`;
    for (const force of [undefined, '', '0', '1', '3', 'true', 'false'])
      for (const flag of [
        [],
        ['--color'],
        ['--no-color'],
        ['--color=256'],
        ['--colors'],
        ['--color=never'],
      ]) {
        const env: Record<string, string | undefined> = { ...process.env, FORCE_COLOR: force };
        if (force === undefined) delete env.FORCE_COLOR;
        const out = execFileSync(process.execPath, ['-e', program, '--', ...flag], { env, encoding: 'utf8' });
        const [patched, original] = JSON.parse(out) as [boolean, boolean];
        expect(patched, `FORCE_COLOR=${force} ${flag.join(' ')}`).toBe(original);
      }
  });
});

describe("oclif's platform check", () => {
  it('takes from is-wsl what wsl-utils re-exports (the patched import)', async () => {
    const wslUtils = (await import(require.resolve('wsl-utils'))) as { isWsl: boolean };
    const isWsl = (await import(require.resolve('is-wsl'))) as { default: boolean };
    expect(isWsl.default).toBe(wslUtils.isWsl);
    const text = readFileSync(require.resolve('wsl-utils'), 'utf8');
    expect(text).toContain("export {default as isWsl} from 'is-wsl';");
  });
});

describe('the patched texts', () => {
  it('are each still in the oclif files the bundle patches (else the patch would silently do nothing)', () => {
    const root = createRequire(import.meta.url);
    for (const [file, replacements] of Object.entries(oclifPatches())) {
      // string-width as oclif's help loads it; oclif's own files from @oclif/core; the autocomplete
      // plugin's from its folder.
      const path = file.startsWith('@oclif/core/')
        ? join(dirname(root.resolve('@oclif/core')), '..', file.slice('@oclif/core/'.length))
        : file.startsWith('@oclif/plugin-autocomplete/')
          ? fileURLToPath(new URL(`../../node_modules/${file}`, import.meta.url))
          : require.resolve(file.replace(/\/index\.js$/, ''));
      const text = readFileSync(path, 'utf8');
      for (const [from] of replacements) expect(text, `${file}: ${from}`).toContain(from);
    }
  });
});

describe("hono/jsx's patch", () => {
  const root = new URL('../../', import.meta.url);

  it('is still in the file the bundles patch', () => {
    for (const [file, replacements] of Object.entries(honoPatches())) {
      const text = readFileSync(new URL(`node_modules/${file}`, root), 'utf8');
      for (const [from] of replacements) expect(text, `${file}: ${from}`).toContain(from);
    }
  });

  it('leaves no AsyncLocalStorage in either bundle (npm run build)', () => {
    for (const bundle of ['dist/mkt.cjs', 'dist/sandbox.cjs'])
      expect(readFileSync(new URL(bundle, root), 'utf8'), bundle).not.toContain('new AsyncLocalStorage(');
  });
});
