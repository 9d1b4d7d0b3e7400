import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SiteInfo } from '../auth/token-endpoint.js';
import { systemClock } from '../platform/clock.js';
import { writeFileAtomic } from '../platform/fs-atomic.js';
import { withFileLock } from '../platform/lock-file.js';
import { checkPrivateFolder } from '../platform/private-folder.js';
import { MktError, UsageError } from '../errors.js';
import { checkUrl } from '../urls.js';
import { APP_ID } from '../wire.js';

/** A setting users may store per profile; `check` throws a UsageError saying what is wrong. */
interface KeySpec {
  description: string;
  check(value: string): void;
}

/** A check by a rule, refused as "Invalid value for KEY: WHY." */
function rule(key: string, ok: (value: string) => boolean, why: (value: string) => string) {
  return (value: string) => {
    if (!ok(value))
      throw new UsageError(`Invalid value for ${key}: ${why(value)}.`, { code: 'invalid_config_value' });
  };
}

/** Every key `mkt config` accepts. */
export const CONFIG_KEYS: Record<string, KeySpec> = {
  'site-url': {
    description: 'root address of the marketplace (default: the local sandbox)',
    check: (v) => void checkUrl(v, 'site', 'site-url'),
  },
  app: {
    description: 'default app for --app (app_…)',
    check: rule(
      'app',
      (v) => APP_ID.test(v),
      (v) => `"${v}" is not an app id (app_…)`,
    ),
  },
  'client-id': {
    description: 'OAuth client id used by `mkt login`',
    check: rule(
      'client-id',
      (v) => v.trim() !== '' && !/\s/.test(v),
      () => 'a client id has no spaces',
    ),
  },
};

export type ProfileSettings = Record<string, string>;

interface ConfigFile {
  profiles: Record<string, ProfileSettings>;
  /** Per site: which token endpoint answered (docs/DECISIONS.md §4). */
  sites?: Record<string, SiteInfo>;
}

/** Checks a key and value before anything is written; throws a UsageError naming what is accepted. */
export function validateSetting(key: string, value?: string): void {
  const spec = CONFIG_KEYS[key];
  if (!spec) {
    throw new UsageError(`Unknown config key "${key}". Known keys: ${Object.keys(CONFIG_KEYS).join(', ')}.`, {
      code: 'unknown_config_key',
    });
  }
  if (value !== undefined) spec.check(value);
}

/**
 * Refuses a config folder another user owns, and takes group/other write access away from ours
 * (with a warning): whoever can write there can redirect the site URL or swap the credential file.
 */
export async function checkConfigDir(dir: string, warn: (message: string) => void): Promise<void> {
  await checkPrivateFolder(
    dir,
    {
      label: 'config folder',
      code: 'config_dir_unsafe',
      hints: ['MKT_CONFIG_DIR=~/.config/mkt mkt …   (a folder you own)'],
    },
    warn,
  );
}

/** The settings file (`config.json` in the config folder): profiles and what we learned about sites. */
export class ConfigStore {
  readonly file: string;
  private readonly lock: string;
  private cache: ConfigFile | undefined;

  constructor(dir: string) {
    this.file = join(dir, 'config.json');
    this.lock = join(dir, 'locks', 'config.lock');
  }

  private async load(): Promise<ConfigFile> {
    if (this.cache) return this.cache;
    let text: string;
    try {
      // Read at once: a start reads a few hundred bytes, and node:fs/promises costs ~1.8 ms to load.
      text = readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return (this.cache = { profiles: {} });
      throw new MktError('config_unreadable', `Cannot read ${this.file}: ${(err as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw corrupt(this.file, (err as Error).message);
    }
    if (!isObject(parsed) || (parsed.profiles !== undefined && !isObject(parsed.profiles))) {
      throw corrupt(this.file, 'expected an object with "profiles"');
    }
    const profiles = (parsed.profiles ?? {}) as Record<string, unknown>;
    for (const [name, settings] of Object.entries(profiles)) {
      if (!isObject(settings) || Object.values(settings).some((v) => typeof v !== 'string')) {
        throw corrupt(this.file, `profile "${name}" must map keys to strings`);
      }
    }
    return (this.cache = { ...(parsed as object), profiles } as ConfigFile);
  }

  /**
   * Read, change, write under the config lock, reading the file again once it is held: two mkt
   * processes changing settings at once both keep their change (docs/DECISIONS.md, parallel writers).
   */
  private async save(update: (file: ConfigFile) => void): Promise<void> {
    await withFileLock(
      this.lock,
      systemClock,
      async () => {
        this.cache = undefined;
        const file = structuredClone(await this.load());
        update(file);
        await writeFileAtomic(this.file, JSON.stringify(file, null, 2) + '\n');
        this.cache = file;
      },
      // Held for a few ms each; a crowd of processes on a busy machine may queue for long.
      { waitMs: 60_000 },
    );
  }

  /** All settings of a profile (empty when the profile has none). */
  async profile(name: string): Promise<ProfileSettings> {
    return { ...((await this.load()).profiles[name] ?? {}) };
  }

  async profileNames(): Promise<string[]> {
    return Object.keys((await this.load()).profiles);
  }

  async get(profile: string, key: string): Promise<string | undefined> {
    return (await this.profile(profile))[key];
  }

  async set(profile: string, key: string, value: string): Promise<void> {
    validateSetting(key, value);
    await this.save((f) => {
      f.profiles[profile] = { ...(f.profiles[profile] ?? {}), [key]: value };
    });
  }

  /** Removes a key; answers whether it was set. */
  async unset(profile: string, key: string): Promise<boolean> {
    validateSetting(key);
    if ((await this.get(profile, key)) === undefined) return false;
    await this.save((f) => {
      delete f.profiles[profile]?.[key];
    });
    return true;
  }

  async removeProfile(profile: string): Promise<void> {
    if (!(await this.profileNames()).includes(profile)) return;
    await this.save((f) => {
      delete f.profiles[profile];
    });
  }

  async siteInfo(siteUrl: string): Promise<SiteInfo> {
    return { ...((await this.load()).sites?.[siteUrl] ?? {}) };
  }

  async rememberSite(siteUrl: string, info: SiteInfo): Promise<void> {
    await this.save((f) => {
      f.sites = { ...(f.sites ?? {}), [siteUrl]: { ...(f.sites?.[siteUrl] ?? {}), ...info } };
    });
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function corrupt(file: string, detail: string): MktError {
  return new MktError(
    'config_corrupt',
    `The config file ${file} is not valid (${detail}). It was left as it is.`,
    1,
    {
      hints: [`Fix or move the file aside: mv "${file}" "${file}.bak"`],
    },
  );
}
