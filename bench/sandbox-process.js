// `mkt sandbox start` in its own process, as a developer runs it, for the benches that measure the
// sandbox from outside (bench/lifecycle.js, bench/clock-reads.js).
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** Starts a sandbox on a free port in `dataDir`; answers its port, seed, peak memory and a stop. */
export async function startSandboxProcess(dataDir) {
  const bin = new URL('../bin/run.js', import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    [bin, 'sandbox', 'start', '--json', '--quiet', '--port', '0', '--data-dir', dataDir],
    { env: { ...process.env, MKT_CONFIG_DIR: dataDir }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const info = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      try {
        resolve(JSON.parse(out));
      } catch {
        // not complete yet
      }
    });
    child.on('exit', (code) => reject(new Error(`sandbox exited ${code}`)));
  });
  const peakMiB = async () =>
    Number(/VmHWM:\s+(\d+) kB/.exec(await readFile(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
  const stop = () => new Promise((resolve) => (child.once('exit', resolve), child.kill('SIGTERM')));
  return { port: Number(new URL(info.site_url).port), seed: info, peakMiB, stop };
}
