// The layers of src/sandbox (docs/CONTRIBUTING.md, "The sandbox's layout"), checked by `npm run lint`:
// the kernel at the bottom, the services above it, openapi/ above them, app.ts and start-sandbox.ts
// at the top. A file may import its own folder, the kernel, and what its folder's line below names;
// nothing else, type-only imports, re-exports and import() included. A folder not in the table is
// refused until it is added. Cycles (also inside a folder) are refused by test/sandbox/layers.test.ts.
import { dirname, relative, resolve } from 'node:path';

/** The services; each may import the kernel and the services its line names. */
export const SERVICES = {
  apps: [],
  billing: [],
  console: ['logs'],
  fixtures: ['billing'],
  identity: ['billing'],
  keys: [],
  logs: [],
  oauth: [],
  plans: [],
  simulator: ['billing'],
  webhooks: [],
};

/** Who may import whom, by the first part of the path under src/sandbox (the kernel: anyone). */
export const SANDBOX_LAYERS = {
  kernel: [],
  ...SERVICES,
  openapi: [],
  'app.ts': [...Object.keys(SERVICES), 'openapi'],
  'start-sandbox.ts': [...Object.keys(SERVICES), 'openapi', 'app.ts'],
};

const SANDBOX = resolve(dirname(new URL(import.meta.url).pathname), '../src/sandbox');

/** The layer of a file or import target under src/sandbox (`app.js` is app.ts once compiled). */
function layerOf(path) {
  const first = relative(SANDBOX, path).split(/[\\/]/)[0];
  return first.replace(/\.js$/, '.ts');
}

/** @type {import('eslint').Rule.RuleModule} */
const layers = {
  meta: {
    type: 'problem',
    docs: {
      description: 'No import from a lower folder of src/sandbox to a higher one, nor between services.',
    },
    schema: [],
  },
  create(context) {
    const from = context.filename;
    if (relative(SANDBOX, from).startsWith('..')) return {};
    const own = layerOf(from);
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = resolve(dirname(from), source);
      if (relative(SANDBOX, target).startsWith('..')) return;
      const to = layerOf(target);
      const allowed = SANDBOX_LAYERS[own];
      if (allowed === undefined) {
        context.report({
          node,
          message: `src/sandbox/${own} is not in the layer table (scripts/eslint-sandbox-layers.js).`,
        });
      } else if (to !== own && to !== 'kernel' && !allowed.includes(to)) {
        context.report({
          node,
          message: `src/sandbox/${own} may not import src/sandbox/${to} (the layers: docs/CONTRIBUTING.md).`,
        });
      }
    };
    const literal = (node) => node?.value ?? node?.literal?.value;
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => check(node, literal(node.source)),
      TSImportType: (node) => check(node, literal(node.source ?? node.argument)),
    };
  },
};

export const sandboxLayers = { rules: { layers } };
