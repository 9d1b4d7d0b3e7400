import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { sandboxLayers } from './scripts/eslint-sandbox-layers.js';

/** What no module outside src/platform calls from node:fs: they write, make, remove or rename. */
const RAW_FILE_CALLS = [
  'writeFileSync',
  'writeFile',
  'appendFile',
  'appendFileSync',
  'open',
  'openSync',
  'createWriteStream',
  'mkdir',
  'mkdirSync',
  'mkdtemp',
  'mkdtempSync',
  'rm',
  'rmSync',
  'rmdir',
  'rmdirSync',
  'unlink',
  'unlinkSync',
  'rename',
  'renameSync',
  'symlink',
  'symlinkSync',
  'link',
  'linkSync',
  'truncate',
  'truncateSync',
];

export default tseslint.config(
  {
    ignores: [
      ...['build/', 'dist/', 'node_modules/', 'coverage/', 'oclif.manifest.json', 'release/'],
      // Checked by their test against clients generated from the OpenAPI document (not in the repository).
      'test/openapi/clients/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        Buffer: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        fetch: 'readonly',
        structuredClone: 'readonly',
        performance: 'readonly',
        URLSearchParams: 'readonly',
        document: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': 'off',
      // A file that outgrows this is two things: split it by what it does (docs/CONTRIBUTING.md).
      'max-lines': ['error', { max: 400 }],
    },
  },
  // The doors (src/platform; docs/DECISIONS.md, "The doors"): outside them no module writes, appends,
  // makes, removes or renames a file or folder, starts a process or signals one. Each exception is
  // named below with its reason; tests, bench/ and scripts/ set up and break things on purpose.
  {
    files: ['src/**/*.ts', 'src/**/*.tsx', 'bin/**/*.js'],
    ignores: [
      // The doors themselves.
      'src/platform/**',
      // Runs before any module of the bundle can load (start-up speed): it keeps the folder rule
      // itself (unsafeFolder, the same as private-folder.ts folderChainProblem) and writes its cache
      // with O_EXCL + rename, reads with O_NOFOLLOW.
      'src/boot.ts',
      // Run by the system's node before the bundle loads: re-runs mkt under a supported node (a child
      // that signals pass through to), and the detached update check, which keeps the bounded-read
      // and own-file rules itself (its header says how).
      'bin/old-node.js',
      'bin/update-check.js',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...['node:fs', 'fs', 'node:fs/promises', 'fs/promises'].map((name) => ({
              name,
              importNames: RAW_FILE_CALLS,
              message:
                'Write, make, remove or rename files through src/platform (fs-atomic.ts, private-folder.ts).',
            })),
            ...['node:child_process', 'child_process'].map((name) => ({
              name,
              message: 'Start processes through src/platform/processes.ts (spawnChild, spawnDetached).',
            })),
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[object.name='process'][property.name='kill']",
          message: 'Signal a process through src/platform/processes.ts (signalProcess, Child.signal).',
        },
        {
          selector:
            "CallExpression[callee.property.name='getBuiltinModule'][arguments.0.value=/child_process$/]",
          message: 'Start processes through src/platform/processes.ts (spawnChild, spawnDetached).',
        },
        {
          selector: `MemberExpression[object.name=/^(fs|fsp|fsPromises)$/][property.name=/^(${RAW_FILE_CALLS.join('|')})$/]`,
          message:
            'Write, make, remove or rename files through src/platform (fs-atomic.ts, private-folder.ts).',
        },
      ],
    },
  },
  // The layers of the sandbox (docs/CONTRIBUTING.md, "The sandbox's layout"): the kernel, the services,
  // openapi/, then app.ts and start-sandbox.ts; no import upward or between services but those named.
  {
    files: ['src/sandbox/**/*.ts', 'src/sandbox/**/*.tsx'],
    plugins: { sandbox: sandboxLayers },
    rules: { 'sandbox/layers': 'error' },
  },
  {
    // CommonJS (bin/package.json): a run starts no ES module loader.
    files: ['bin/*.js'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', __dirname: 'readonly', module: 'writable' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
