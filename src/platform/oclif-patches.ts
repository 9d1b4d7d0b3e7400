// Steps of oclif's, each replaced in the bundle (esbuild.config.js) by a function that returns the
// same and falls back to the original wherever sameness is not certain;
// test/commands/oclif-patches.test.ts checks them against ICU, ejs and string-width. Each is
// inlined with Function#toString, so it uses nothing outside itself. Why: BENCHMARKS.md (start-up).

/**
 * A comparator with `a.localeCompare(b)`'s sign for command ids, without building ICU's collator
 * (≈ 7 ms): ids of `-`, `:`, digits and lower-case letters where ICU's locale (from these
 * variables, except on Windows) sorts in root order (C, POSIX, English): character by character in
 * this order.
 */
export function idOrder(): (a: string, b: string) => number {
  const locales = ['LC_ALL', 'LC_COLLATE', 'LC_MESSAGES', 'LANG', 'LANGUAGE'].map((k) => process.env[k]);
  const rootOrder =
    process.platform !== 'win32' && locales.every((l) => !l || /^(C|POSIX|en)([._@:-]|$)/.test(l));
  const plain = /^[-:0-9a-z]*$/;
  const order = '-:0123456789abcdefghijklmnopqrstuvwxyz';
  return (a, b) => {
    if (!rootOrder || !plain.test(a) || !plain.test(b)) return a.localeCompare(b);
    for (let i = 0; i < a.length && i < b.length; i++)
      if (a[i] !== b[i]) return order.indexOf(a[i]!) - order.indexOf(b[i]!);
    return a.length - b.length;
  };
}

/**
 * `ejs.render(text, context)` (what `render()` calls) without compiling a function per text: text
 * with no tag is itself, and `<%= name.path %>` is the value, escaped as ejs escapes it.
 */
export function renderTemplate(
  text: string,
  context: Record<string, unknown> | undefined,
  render: () => string,
): string {
  // Keys ejs would take from the context as its options (ejs 3.1 and 6: _OPTS_PASSABLE_WITH_DATA;
  // `client` is 3.1's only, a fall-back to ejs either way).
  const options = ['delimiter', 'scope', 'context', 'debug', 'compileDebug', 'client', '_with'];
  options.push('rmWhitespace', 'strict', 'filename', 'async');
  if (typeof text !== 'string' || options.some((k) => context?.[k] !== undefined)) return render();
  const tag = /<%=\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\s*%>/g;
  const plain = (s: string) => !s.includes('<%') && !s.includes('%>');
  const escape: Record<string, string> = {
    '&': '&amp;',
    '<': '&lt;',
    '>': '&gt;',
    '"': '&#34;',
    "'": '&#39;',
  };
  let out = '';
  let last = 0;
  for (const match of text.matchAll(tag)) {
    const before = text.slice(last, match.index);
    const [name, ...path] = match[1]!.split('.') as [string, ...string[]];
    if (!plain(before) || context == null || !(name in context)) return render();
    let value = context[name];
    for (const key of path) {
      if (value == null) return render();
      value = (value as Record<string, unknown>)[key];
    }
    out += before + (value == null ? '' : String(value).replace(/[&<>'"]/g, (c) => escape[c]!));
    last = match.index! + match[0].length;
  }
  return plain(text.slice(last)) ? out + text.slice(last) : render();
}

/** string-width's `width(text)` without its emoji pattern: printable ASCII is a column a character. */
export function textWidth(width: (text: unknown) => number, text: unknown): number {
  return typeof text === 'string' && /^[\x20-\x7e]*$/.test(text) ? text.length : width(text);
}

/**
 * oclif's `supportsColor()` (supports-color's verdict on stdout and on stderr) without loading
 * supports-color and node:tty when it is certain: with stdout no terminal and nothing forcing colour
 * (FORCE_COLOR, a --color flag of any form), supports-color says no colour for stdout.
 */
export function colorOffTerminal(original: () => boolean): boolean {
  const forced = 'FORCE_COLOR' in process.env || process.argv.some((a) => a.includes('color'));
  return !forced && !process.stdout.isTTY ? false : original();
}

/** plugin-autocomplete's rendering of a summary (zsh.js and powershell.js alike). */
const AUTOCOMPLETE_RENDER = 'return ejs\n            .render(summary, { config: this.config })';

/**
 * The bundle's text patches of oclif's files (esbuild.config.js): for each file under node_modules,
 * the texts replaced and what replaces them. Sorting the command ids with localeCompare builds ICU's
 * collator (≈ 7 ms), ejs compiles each help text into a function, string-width runs an emoji pattern
 * over plain ASCII, the platform check loads wsl-utils, which loads Node's child_process at once
 * (≈ 2.5 ms) for its PowerShell helpers, to re-export is-wsl, the colour check loads node:tty
 * (≈ 1.4 ms) to learn what an output that is no terminal already says, and reading package.json and
 * the manifest loads node:fs/promises (≈ 1.8 ms; read at once, in the same async function, the same
 * text or the same error), and a run of one command reads and builds all 65 commands' entries: the
 * same results without them. Each is kept while bench/oclif-patches.js shows
 * it pays (BENCHMARKS.md); a fourth (ansis's strip) no longer did and went.
 */
export function oclifPatches(): Record<string, Array<[string, string]>> {
  const autocompleteRender = `return (${renderTemplate})(summary, { config: this.config }, () => ejs.render(summary, { config: this.config }))`;
  return {
    '@oclif/core/lib/config/plugin.js': [
      [
        '.sort((a, b) => a.id.localeCompare(b.id))',
        `.sort(((order) => (a, b) => order(a.id, b.id))((${idOrder})()))`,
      ],
      // The root plugin's manifest with only the command this run runs, when src/boot.ts
      // (commandManifest) found one and bin/run.js set it.
      [
        "const p = (0, node_path_1.join)(this.root, `${dotfile ? '.' : ''}oclif.manifest.json`);",
        "const p = (this.isRoot && !dotfile && globalThis.oclif?.mktManifest) || (0, node_path_1.join)(this.root, `${dotfile ? '.' : ''}oclif.manifest.json`);",
      ],
    ],
    // `mkt autocomplete SHELL` renders every command's and flag's summary so, for zsh and PowerShell.
    '@oclif/plugin-autocomplete/lib/autocomplete/powershell.js': [[AUTOCOMPLETE_RENDER, autocompleteRender]],
    '@oclif/plugin-autocomplete/lib/autocomplete/zsh.js': [[AUTOCOMPLETE_RENDER, autocompleteRender]],
    '@oclif/core/lib/help/util.js': [
      [
        'return ejs_1.default.render(t, context);',
        `return (${renderTemplate})(t, context, () => ejs_1.default.render(t, context));`,
      ],
    ],
    '@oclif/core/lib/ux/supports-color.js': [
      [
        'return Boolean(supports_color_1.stdout) && Boolean(supports_color_1.stderr);',
        `return (${colorOffTerminal})(() => Boolean(supports_color_1.stdout) && Boolean(supports_color_1.stderr));`,
      ],
    ],
    '@oclif/core/lib/util/fs.js': [
      [
        "const contents = await (0, promises_1.readFile)(path, 'utf8');",
        "const contents = (0, node_fs_1.readFileSync)(path, 'utf8');",
      ],
    ],
    '@oclif/core/lib/util/os.js': [
      ["(await import('wsl-utils')).isWsl ? 'wsl'", "(await import('is-wsl')).default ? 'wsl'"],
    ],
    'string-width/index.js': [
      ['module.exports = stringWidth;', `module.exports = (s) => (${textWidth})(stringWidth, s);`],
    ],
  };
}
