import { spawn } from 'node:child_process';

type Env = Record<string, string | undefined>;

/** Splits a command line on spaces, keeping "quoted" or 'quoted' parts together. */
export function splitCommand(command: string): string[] {
  const parts = command.match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
  return parts.map((p) => p.replace(/^(["'])(.*)\1$/, '$2'));
}

/**
 * Opens a URL for the person: MKT_BROWSER (a command, run with the URL as its last argument),
 * else BROWSER, else the OS opener. Resolves once the opener started; never waits for the browser.
 */
export async function openBrowser(url: string, env: Env): Promise<void> {
  const command = env.MKT_BROWSER || env.BROWSER;
  if (command) {
    const [file, ...args] = splitCommand(command);
    if (!file) return;
    await new Promise<void>((resolve, reject) => {
      const child = spawn(file, [...args, url], {
        stdio: 'ignore',
        detached: true,
        env: env as NodeJS.ProcessEnv,
      });
      child.once('error', reject);
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    });
    return;
  }
  const { default: open } = await import('open');
  const child = await open(url, { wait: false });
  child.unref();
}
