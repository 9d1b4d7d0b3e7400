import { readdirSync } from 'node:fs';
import { makeFolderSync, renameSyncChecked } from '../../../platform/fs-atomic.js';
import { join } from 'node:path';
import { claimFolder, LOCK_FILE, openDatabase, takeLock } from './database.js';
import { Ledger } from './ledger.js';
import { earlierFiles, IMPORTED_SUFFIX, readEarlierChanges, setAsideEarlierFiles } from './log-import.js';

/** How to open a data folder; `log` receives the lines a developer should see (import, tightening, reset). */
export interface OpenLedgerOptions {
  reset?: boolean;
  log: (line: string) => void;
  onCommitError: (error: unknown) => void;
}

/** The folders a reset keeps the earlier files in, inside the data folder. */
const KEPT_PREFIX = 'before-reset-';

/**
 * Opens the ledger of `dataDir` for this process alone: the folder made the owner's, the database
 * checked, locked and migrated, and an earlier version's files imported in one transaction (then
 * renamed, never deleted). With `reset`, the folder's files are first moved into a folder of their
 * own inside it (a damaged database too), under the folder's lock. Answers `fresh: true` when there
 * is nothing yet to load (seed it).
 */
export async function openLedger(
  dataDir: string,
  options: OpenLedgerOptions,
): Promise<{ ledger: Ledger; fresh: boolean }> {
  const tightened = claimFolder(dataDir);
  if (tightened !== undefined) options.log(tightened);
  if (options.reset) {
    const kept = await keepAside(dataDir);
    if (kept !== undefined) options.log(`Reset: the earlier files of ${dataDir} are kept in ${kept}.`);
  }
  const { db, openReader, lock } = await openDatabase(dataDir);
  const ledger = new Ledger(db, openReader, lock, dataDir, options.onCommitError);
  const earlier = earlierFiles(dataDir);
  if (earlier.length > 0) {
    if (ledger.seed.app_id !== '') {
      // After an import that committed, only the renaming was left to do.
      setAsideEarlierFiles(dataDir);
    } else {
      const changes = readEarlierChanges(dataDir);
      ledger.importChanges(changes);
      setAsideEarlierFiles(dataDir);
      options.log(
        `Imported the earlier sandbox data in ${dataDir} (${changes.length} changes from ${earlier.join(', ')}); ` +
          `the old files are kept as *${IMPORTED_SUFFIX}.`,
      );
    }
  }
  return { ledger, fresh: ledger.seed.app_id === '' };
}

/**
 * Moves every file of the folder (but its lock and what earlier resets kept) into a new folder
 * `before-reset-<time>` inside it, holding the lock meanwhile (a reset never pulls the folder from
 * under another sandbox). Answers that folder, or undefined when there was nothing to keep.
 */
async function keepAside(dataDir: string): Promise<string | undefined> {
  const names = readdirSync(dataDir).filter((n) => n !== LOCK_FILE && !n.startsWith(KEPT_PREFIX));
  if (names.length === 0) return undefined;
  const { lock } = await takeLock(dataDir);
  try {
    const kept = join(dataDir, `${KEPT_PREFIX}${new Date().toISOString().replace(/[:.]/g, '-')}`);
    makeFolderSync(kept);
    for (const name of names) renameSyncChecked(join(dataDir, name), join(kept, name));
    return kept;
  } finally {
    lock.close();
  }
}
