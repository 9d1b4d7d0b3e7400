import type { DatabaseSync } from 'node:sqlite';
import { claimFolder, openDatabase } from './database.js';
import { Ledger } from './ledger.js';
import { earlierFiles, IMPORTED_SUFFIX, readEarlierChanges, setAsideEarlierFiles } from './log-import.js';

/** How to open a data folder; `log` receives the lines a developer should see (import, tightening). */
export interface OpenLedgerOptions {
  reset?: boolean;
  log: (line: string) => void;
  onCommitError: (error: unknown) => void;
}

/**
 * Opens the ledger of `dataDir` for this process alone: the folder made the owner's, the database
 * locked and migrated, and an earlier version's files imported in one transaction (then renamed,
 * never deleted). Answers `fresh: true` when there is nothing yet to load (seed it).
 */
export async function openLedger(
  dataDir: string,
  options: OpenLedgerOptions,
): Promise<{ ledger: Ledger; fresh: boolean }> {
  const tightened = claimFolder(dataDir);
  if (tightened !== undefined) options.log(tightened);
  const db = await openDatabase(dataDir);
  if (options.reset) wipe(db);
  const ledger = new Ledger(db, dataDir, options.onCommitError);
  const earlier = earlierFiles(dataDir);
  if (earlier.length > 0) {
    if (options.reset || ledger.seed.app_id !== '') {
      // A reset forgets them; after an import that committed, only the renaming was left to do.
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

/** Empties every table (the lock stays held: a reset never pulls the folder from under another sandbox). */
function wipe(db: DatabaseSync): void {
  const tables = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
    .all() as Array<{ name: string }>;
  db.exec('BEGIN IMMEDIATE');
  for (const { name } of tables) db.exec(`DELETE FROM "${name}"`);
  db.exec('COMMIT');
}
