import { spawn } from 'node:child_process';

type Env = Record<string, string | undefined>;

/** Secrets mkt reads from its environment; no child it starts to open a URL inherits them. */
const SECRET_ENV = ['MKT_CLIENT_SECRET', 'MKT_API_KEY', 'MKT_ACCESS_TOKEN', 'MKT_WEBHOOK_SECRET'];

/** A copy of `env` without the secrets. */
function withoutSecrets(env: Env): Env {
  const copy = { ...env };
  for (const name of SECRET_ENV) delete copy[name];
  return copy;
}

/** Splits a command line on spaces, keeping "quoted" or 'quoted' parts together. */
function splitCommand(command: string): string[] {
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
        env: withoutSecrets(env) as NodeJS.ProcessEnv,
      });
      child.once('error', reject);
      child.once('spawn', () => {
        child.unref();
        resolve();
      });
    });
    return;
  }
  // `open` starts the OS opener with process.env: the secrets leave it until the opener started.
  const saved = SECRET_ENV.map((name) => [name, process.env[name]] as const);
  for (const [name] of saved) delete process.env[name];
  try {
    const { default: open } = await import('open');
    const child = await open(url, { wait: false });
    child.unref();
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value;
  }
}
