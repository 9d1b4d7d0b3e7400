/**
 * A package loaded on demand, through require: for one that ships CommonJS (jq-wasm,
 * @napi-rs/keyring), import() would start Node's ES module loader for it alone, ~10 ms a run.
 */
export function requireCommonJs<T>(name: string): T {
  return process.getBuiltinModule('node:module').createRequire(import.meta.url)(name) as T;
}

/** The file `require(name)` would load (to read a file of that package). */
export function resolveCommonJs(name: string): string {
  return process
    .getBuiltinModule('node:module')
    .createRequire(import.meta.url)
    .resolve(name);
}
