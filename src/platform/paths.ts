import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

/** The folder for settings: MKT_CONFIG_DIR, else the platform's config folder. */
export function configDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (env.MKT_CONFIG_DIR) return env.MKT_CONFIG_DIR;
  const home = env.HOME || homedir();
  if (platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'mkt');
  if (platform === 'darwin') return join(home, 'Library', 'Preferences', 'mkt');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'mkt');
}

/** The folder for data (sandbox state, webhook journal): MKT_DATA_DIR, else the platform's data folder. */
export function dataDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (env.MKT_DATA_DIR) return env.MKT_DATA_DIR;
  const home = env.HOME || homedir();
  if (platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'mkt');
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'mkt');
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'mkt');
}

/** The folder for caches (the code cache, the update check): MKT_CACHE_DIR, else the platform's cache folder. */
export function cacheDir(env: Env, platform: NodeJS.Platform = process.platform): string {
  if (env.MKT_CACHE_DIR) return env.MKT_CACHE_DIR;
  const home = env.HOME || homedir();
  if (platform === 'darwin') return join(home, 'Library', 'Caches', 'mkt');
  return join(
    env.XDG_CACHE_HOME || (platform === 'win32' && env.LOCALAPPDATA) || join(home, '.cache'),
    'mkt',
  );
}

/** The sandbox's data folder: `--data-dir`, else the platform data folder's `sandbox`. */
export function sandboxFolder(env: Env, flag: string | undefined): string {
  return flag ?? join(dataDir(env), 'sandbox');
}
