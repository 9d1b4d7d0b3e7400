// The doors (src/platform) are the only way to write files, start processes or signal them: the lint
// rule of `npm run lint` (eslint.config.js) refuses a raw call anywhere else. Run through ESLint's own
// API on text planted as a command file, so that removing or loosening the rule fails here.
import { ESLint } from 'eslint';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const eslint = new ESLint({ cwd: root });

async function errors(file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: join(root, file) });
  return result!.messages.filter((m) => m.severity === 2).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('the doors lint rule', () => {
  it('fails a raw fs.writeFileSync in a command file', async () => {
    const found = await errors(
      'src/commands/planted.ts',
      "import { writeFileSync } from 'node:fs';\nexport const f = () => writeFileSync('/tmp/x', 'y');\n",
    );
    expect(found).toEqual([
      expect.stringMatching(/^no-restricted-imports: 'writeFileSync' import from 'node:fs'.*src\/platform/),
    ]);
  });

  it('fails fs.promises writes, child_process, process.kill and getBuiltinModule(child_process) outside src/platform', async () => {
    const found = await errors(
      'src/apps/planted.ts',
      [
        "import * as fs from 'node:fs';",
        "import { rename } from 'node:fs/promises';",
        "import { spawn } from 'node:child_process';",
        "export const a = () => fs.appendFileSync('/tmp/x', 'y');",
        'export const b = () => rename;',
        "export const c = () => spawn('ls');",
        "export const d = () => process.kill(1, 'SIGTERM');",
        "export const e = () => process.getBuiltinModule('node:child_process');",
        '',
      ].join('\n'),
    );
    // A namespace import of node:fs is refused too (it holds the raw calls), and so is its use.
    expect(found.map((m) => m.split(':')[0])).toEqual([
      'no-restricted-imports',
      'no-restricted-imports',
      'no-restricted-imports',
      'no-restricted-syntax',
      'no-restricted-syntax',
      'no-restricted-syntax',
    ]);
  });

  it('lets the doors themselves, and reads, through', async () => {
    const raw =
      "import { readFileSync, writeFileSync } from 'node:fs';\nexport const f = () => writeFileSync('/tmp/x', readFileSync('/tmp/y'));\n";
    expect(await errors('src/platform/planted.ts', raw)).toEqual([]);
    const read =
      "import { readFileSync } from 'node:fs';\nexport const f = () => readFileSync('/tmp/y', 'utf8');\n";
    expect(await errors('src/commands/planted.ts', read)).toEqual([]);
  });
});
