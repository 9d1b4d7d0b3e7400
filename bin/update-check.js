// The update check (src/update/notice.ts starts it, detached): reads mkt's latest version from the
// registry and writes it into the cache file beside when it was read. Silent; gives up after 10 s.
// Usage: node bin/update-check.js CACHE_FILE REGISTRY_URL
// It runs outside the bundle, so it keeps the doors' rules itself (src/platform: bounded.ts,
// fs-atomic.ts): the answer is read up to 64 KiB after decompression, within the same 10 s; the state
// file is read only when it is this user's (never through a link) and replaced by a fresh file of ours
// (O_EXCL) renamed over it. The notice checked the folder before starting this process.
const {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} = require('node:fs');

const [file, registry] = process.argv.slice(2);
/** The most of the registry's answer that is read (bytes, decompressed): its dist-tags are ~100 bytes. */
const MAX_ANSWER = 64 * 1024;

async function readAnswer(res) {
  const chunks = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER) throw new Error(`the registry's answer is larger than ${MAX_ANSWER} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function readState() {
  let fd;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    const info = fstatSync(fd);
    if (!info.isFile() || info.uid !== process.getuid?.() || info.size > 4096) return {};
    return JSON.parse(readFileSync(fd, 'utf8'));
  } catch {
    return {}; // the first check, or a file that is not ours: replaced
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

async function main() {
  const url = new URL('-/package/mkt/dist-tags', registry.endsWith('/') ? registry : `${registry}/`);
  const signal = AbortSignal.timeout(10_000);
  const options = { signal, headers: { accept: 'application/json' } };
  // A proxy, where the environment names one (fetch alone does not read it on Node 22).
  if (process.env.HTTPS_PROXY || process.env.https_proxy || process.env.HTTP_PROXY || process.env.http_proxy)
    options.dispatcher = new (require('undici').EnvHttpProxyAgent)();
  const res = await fetch(url, options);
  if (!res.ok) return;
  const { latest } = JSON.parse(await readAnswer(res));
  if (typeof latest !== 'string' || !/^\d+\.\d+\.\d+$/.test(latest)) return;
  const next = `${file}.${process.pid}.tmp`;
  const fd = openSync(next, 'wx', 0o600);
  try {
    writeFileSync(fd, `${JSON.stringify({ ...readState(), latest, checked_at: Date.now() })}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(next, file);
  } catch {
    rmSync(next, { force: true });
  }
}

// Past 10 s, whatever it is doing (a body that trickles in), the check is over.
setTimeout(() => process.exit(0), 10_000).unref();
main().catch(() => {});
