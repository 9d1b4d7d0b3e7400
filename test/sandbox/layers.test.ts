// The layers of src/sandbox (docs/CONTRIBUTING.md, "The sandbox's layout"): the lint rule of
// `npm run lint` (scripts/eslint-sandbox-layers.js) refuses an import upward or between services not
// named in its table, type-only ones included; and the import graph of src/sandbox, read with the
// TypeScript compiler's own scanner, has no cycle at all (inside a folder too).
import { ESLint } from 'eslint';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const sandbox = join(root, 'src/sandbox');
const eslint = new ESLint({ cwd: root });

async function layerErrors(file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: join(sandbox, file) });
  return result!.messages.filter((m) => m.ruleId === 'sandbox/layers').map((m) => m.message);
}

/** Every file of src/sandbox and the files of src/sandbox it imports (any kind of import). */
function importGraph(): Map<string, string[]> {
  const files = readdirSync(sandbox, { recursive: true, encoding: 'utf8' }).filter((f) => /\.tsx?$/.test(f));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(join(sandbox, file), 'utf8'), true, true);
    const targets = info.importedFiles
      .map((i) => i.fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => relative(sandbox, resolve(dirname(join(sandbox, file)), name)))
      .filter((target) => !target.startsWith('..'))
      .map((target) =>
        target.replace(/\.js$/, files.includes(target.replace(/\.js$/, '.tsx')) ? '.tsx' : '.ts'),
      );
    graph.set(file, targets);
  }
  return graph;
}

/** The import cycles of a graph (Tarjan's strongly connected components with more than one file). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component = stack.splice(stack.indexOf(v));
      if (component.length > 1 || graph.get(v)?.includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the layers of the sandbox', () => {
  it('refuses the kernel importing a service, even for a type', async () => {
    expect(
      await layerErrors(
        'kernel/planted.ts',
        "import type { Life } from '../billing/life.js';\nexport type L = Life;\n",
      ),
    ).toEqual(['src/sandbox/kernel may not import src/sandbox/billing (the layers: docs/CONTRIBUTING.md).']);
    expect(
      await layerErrors('kernel/planted.ts', "export type R = import('../console/room.js').ConsoleRoom;\n"),
    ).toEqual(['src/sandbox/kernel may not import src/sandbox/console (the layers: docs/CONTRIBUTING.md).']);
    expect(
      await layerErrors('kernel/http/planted.ts', "export { sandboxApp } from '../../app.js';\n"),
    ).toEqual(['src/sandbox/kernel may not import src/sandbox/app.ts (the layers: docs/CONTRIBUTING.md).']);
  });

  it('refuses a service importing openapi/ or the composition above it', async () => {
    const text = [
      "import { openApiDocument } from '../openapi/document.js';",
      "export const app = () => import('../app.js');",
      'export const d = openApiDocument;',
      '',
    ].join('\n');
    expect(await layerErrors('plans/planted.ts', text)).toEqual([
      'src/sandbox/plans may not import src/sandbox/openapi (the layers: docs/CONTRIBUTING.md).',
      'src/sandbox/plans may not import src/sandbox/app.ts (the layers: docs/CONTRIBUTING.md).',
    ]);
  });

  it('refuses a service importing a service its line does not name, and a folder not in the table', async () => {
    const text = "export { Life } from '../billing/life.js';\nexport * from '../oauth/grants.js';\n";
    expect(await layerErrors('plans/planted.ts', text)).toEqual([
      'src/sandbox/plans may not import src/sandbox/billing (the layers: docs/CONTRIBUTING.md).',
      'src/sandbox/plans may not import src/sandbox/oauth (the layers: docs/CONTRIBUTING.md).',
    ]);
    expect(
      await layerErrors('billing/planted.ts', "import type { Fixtures } from '../fixtures/schema.js';\n"),
    ).toEqual([
      'src/sandbox/billing may not import src/sandbox/fixtures (the layers: docs/CONTRIBUTING.md).',
    ]);
    expect(
      await layerErrors('payments/planted.ts', "import { randomId } from '../kernel/ids.js';\n"),
    ).toEqual(['src/sandbox/payments is not in the layer table (scripts/eslint-sandbox-layers.js).']);
  });

  it('lets through the kernel, a named service, the own folder, and the top importing all', async () => {
    const allowed =
      "import { Life } from '../billing/life.js';\nimport { randomId } from '../kernel/ids.js';\n";
    expect(await layerErrors('identity/planted.ts', allowed)).toEqual([]);
    expect(await layerErrors('billing/planted.ts', "import { Life } from './life.js';\n")).toEqual([]);
    expect(await layerErrors('start-sandbox.ts', "import { sandboxApp } from './app.js';\n")).toEqual([]);
  });

  it('holds on the tree: no file of src/sandbox imports against the layers', async () => {
    const results = await eslint.lintFiles(['src/sandbox']);
    const refused = results.flatMap((r) =>
      r.messages.filter((m) => m.ruleId === 'sandbox/layers').map((m) => `${r.filePath}: ${m.message}`),
    );
    expect(results.length).toBe(
      readdirSync(sandbox, { recursive: true }).filter((f) => /\.tsx?$/.test(String(f))).length,
    );
    expect(refused).toEqual([]);
  }, 60_000);

  it('has no import cycle, type-only imports included, and finds one planted', () => {
    const graph = importGraph();
    expect(graph.get('kernel/streams.ts')).toEqual(['kernel/principal.ts']);
    expect(graph.get('start-sandbox.ts')).toContain('app.ts');
    expect(cycles(graph)).toEqual([]);
    // streams.ts took Principal from core.ts, which imports streams.ts and, through the ledger, the
    // deliveries (a cycle of type-only imports, now gone).
    graph.set('kernel/streams.ts', ['kernel/core.ts']);
    expect(cycles(graph)).toEqual([
      [
        'kernel/core.ts',
        'kernel/deliveries/dispatcher.ts',
        'kernel/deliveries/fanout.ts',
        'kernel/storage/ledger.ts',
        'kernel/streams.ts',
      ],
    ]);
  });
});
