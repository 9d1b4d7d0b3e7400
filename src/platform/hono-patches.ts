// The bundle's text patch of hono (esbuild.config.js, as for oclif's in oclif-patches.ts);
// test/commands/oclif-patches.test.ts fails when the patched text is gone.

/**
 * hono/jsx renders inside an AsyncLocalStorage, so that `useContext` still answers after an `await`
 * in an async component. On Node 22 the first such render turns on async hooks for the rest of the
 * process, and every promise of every later request pays for them: about 5 % of the sandbox's
 * requests per second (BENCHMARKS.md, the sandbox). The sandbox's pages have no async component and
 * no context; without an AsyncLocalStorage hono keeps a render's context in a variable while the
 * render runs, which gives the same pages. Node 24 keeps such storage without hooks.
 */
export function honoPatches(): Record<string, Array<[string, string]>> {
  return {
    'hono/dist/jsx/context.js': [
      [
        'if (AsyncLocalStorage) asyncLocalStorage = new AsyncLocalStorage();',
        'asyncLocalStorage = undefined;',
      ],
    ],
  };
}
