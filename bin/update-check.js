// The update check (src/update/notice.ts starts it, detached): reads mkt's latest version from the
// registry and writes it into the cache file beside when it was read. Silent; gives up after 10 s.
// Usage: node bin/update-check.js CACHE_FILE REGISTRY_URL
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { dirname } = require('node:path');

const [file, registry] = process.argv.slice(2);

async function main() {
  const url = new URL('-/package/mkt/dist-tags', registry.endsWith('/') ? registry : `${registry}/`);
  const options = { signal: AbortSignal.timeout(10_000), headers: { accept: 'application/json' } };
  // A proxy, where the environment names one (fetch alone does not read it on Node 22).
  if (process.env.HTTPS_PROXY || process.env.https_proxy || process.env.HTTP_PROXY || process.env.http_proxy)
    options.dispatcher = new (require('undici').EnvHttpProxyAgent)();
  const res = await fetch(url, options);
  if (!res.ok) return;
  const { latest } = await res.json();
  if (typeof latest !== 'string' || !/^\d+\.\d+\.\d+$/.test(latest)) return;
  let state = {};
  try {
    state = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    // the first check
  }
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const next = `${file}.${process.pid}`;
  writeFileSync(next, `${JSON.stringify({ ...state, latest, checked_at: Date.now() })}\n`);
  renameSync(next, file);
}

main().catch(() => {});
