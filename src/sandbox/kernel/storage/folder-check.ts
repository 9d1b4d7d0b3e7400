import { lstatSync } from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import { MIGRATIONS } from './migrations.js';

/**
 * A data folder whose database this sandbox did not make or that is damaged: refused before anything
 * in it is changed, in one sentence naming the file, what is wrong, and the two ways on.
 */
export class DamagedDataError extends Error {
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(
      `The sandbox database ${file} ${problem}; nothing was changed: start with another --data-dir, or with --reset (which first keeps a copy of the folder's files).`,
    );
  }
}

/** Refuses a database path that is not a plain file this sandbox could have made (a symlink, a folder). */
export function checkDatabaseFile(path: string): void {
  let stat;
  try {
    stat = lstatSync(path);
  } catch {
    return; // none yet: a fresh folder
  }
  if (stat.isSymbolicLink())
    throw new DamagedDataError(path, 'is a symbolic link, not the plain file the sandbox keeps');
  if (!stat.isFile()) throw new DamagedDataError(path, 'is not a regular file');
}

/** SQLite's "file is not a database" and "database disk image is malformed". */
const SQLITE_NOTADB = 26;
const SQLITE_CORRUPT = 11;

/** What a failed first read of the file means, as a {@link DamagedDataError} when it is damage. */
export function damageOf(path: string, error: unknown): unknown {
  const e = error as { errcode?: number; message?: string };
  const code = (e.errcode ?? 0) & 0xff;
  if (code === SQLITE_NOTADB) return new DamagedDataError(path, 'is not a SQLite database');
  if (code === SQLITE_CORRUPT)
    return new DamagedDataError(path, `is damaged (SQLite says: ${e.message ?? 'malformed'})`);
  return error;
}

type Schema = Map<string, string[]>;

function schemaOf(db: DatabaseSync): Schema {
  const schema: Schema = new Map();
  const tables = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
    .all() as Array<{ name: string }>;
  for (const { name } of tables) {
    const columns = db.prepare(`SELECT name FROM pragma_table_info(?)`).all(name) as Array<{ name: string }>;
    schema.set(
      name,
      columns.map((c) => c.name),
    );
  }
  return schema;
}

const expected = new Map<number, Schema>();

/** The tables and columns the migrations make up to `version`, from an empty in-memory database. */
function expectedSchema(Database: typeof DatabaseSync, version: number): Schema {
  let schema = expected.get(version);
  if (schema === undefined) {
    const db = new Database(':memory:');
    for (const m of MIGRATIONS.slice(0, version)) db.exec(m.sql);
    schema = schemaOf(db);
    db.close();
    expected.set(version, schema);
  }
  return schema;
}

/**
 * Before anything is written: the file is a SQLite database of this sandbox (a schema version, every
 * table and column it implies) or an empty one. A database of another program (tables, no version),
 * a dropped table or column are refused.
 */
export function checkSchema(Database: typeof DatabaseSync, db: DatabaseSync, path: string): void {
  let version: number;
  let actual: Schema;
  try {
    version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
    actual = schemaOf(db);
  } catch (error) {
    throw damageOf(path, error);
  }
  if (version === 0) {
    if (actual.size > 0)
      throw new DamagedDataError(
        path,
        'is a SQLite database of another program (it has tables but no sandbox schema)',
      );
    return;
  }
  if (version > MIGRATIONS.length) return; // from a newer mkt: said by the migration step
  for (const [table, columns] of expectedSchema(Database, version)) {
    const have = actual.get(table);
    if (have === undefined) throw new DamagedDataError(path, `has lost its table "${table}"`);
    const missing = columns.find((c) => !have.includes(c));
    if (missing !== undefined) throw new DamagedDataError(path, `has lost the column "${table}.${missing}"`);
  }
}

/** The columns that hold JSON text (read with JSON.parse), by table. */
const JSON_COLUMNS: ReadonlyArray<[string, string, string?]> = [
  ['apps', 'redirect_uris'],
  ['plans', 'features'],
  ['plans', 'price'],
  ['tokens', 'scopes'],
  ['tokens', 'successor'],
  ['deliveries', 'body'],
  ['meta', 'value', `key = 'seed'`],
];

/** Every JSON column of every row parses (SQLite's json_valid, one scan per column). */
export function checkRows(db: DatabaseSync, path: string): void {
  for (const [table, column, where] of JSON_COLUMNS) {
    const bad = db
      .prepare(
        `SELECT rowid AS id FROM ${table} WHERE ${column} IS NOT NULL AND NOT json_valid(${column})${where ? ` AND ${where}` : ''} LIMIT 1`,
      )
      .get() as { id: number } | undefined;
    if (bad !== undefined)
      throw new DamagedDataError(
        path,
        `has a row of "${table}" (rowid ${bad.id}) whose ${column} is not valid JSON`,
      );
  }
}
