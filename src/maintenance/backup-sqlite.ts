// `packs backup` / `packs restore` on SQLite (src/maintenance/backup.ts): the
// database file is copied with SQLite's online backup API (better-sqlite3's
// db.backup), which reads a consistent picture while a server keeps writing,
// and put back by renaming a checked copy into place with no server running.
import fs from 'node:fs'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import { Kysely, SqliteDialect, sql } from 'kysely'
import { loadSqlite, type Db } from '../db/index.js'
import type { Database } from '../db/schema.js'
import { BadRequest, Conflict } from '../errors.js'

/**
 * Pages per backup step after the first: all of them. The API copies a step
 * at a time and starts again from the first page when another connection (the
 * running server) wrote in between; in steps of 100 pages (better-sqlite3's
 * default) a busy site could keep a large copy restarting forever. One step
 * is one read transaction, which in WAL mode never blocks the server's writes.
 */
const ALL_PAGES = 0x7fffffff

async function openSqlite(file: string, options: { readonly?: boolean } = {}) {
  const BetterSqlite3 = await loadSqlite()
  return new BetterSqlite3(file, { fileMustExist: true, readonly: options.readonly ?? false })
}

/**
 * Copies the live database at `source` into `dest` (an empty file the caller
 * created with the backup's modes) and runs `read` on the copy: what it reads
 * is exactly what the backup holds. The copy is left in rollback-journal mode,
 * one self-contained file (the server turns WAL on again when it opens it).
 */
export async function snapshotSqlite<T>(source: string, dest: string, read: (db: Db) => Promise<T>): Promise<{ result: T; tool: string }> {
  if (!fs.existsSync(source)) throw new BadRequest(`there is no SQLite database at ${source}: nothing to back up (check DATABASE_URL / PACKS_DATA_DIR)`)
  const live = await openSqlite(source)
  let version: string
  try {
    live.pragma('busy_timeout = 5000')
    version = (live.prepare('select sqlite_version() as v').get() as { v: string }).v
    await live.backup(dest, { progress: () => ALL_PAGES })
  } finally {
    live.close()
  }
  const copy = await openSqlite(dest)
  copy.pragma('journal_mode = DELETE')
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: copy }) })
  try {
    return { result: await read(db), tool: `SQLite ${version} online backup` }
  } finally {
    // Closes `copy` too.
    await db.destroy()
  }
}

/** The target database, for a check before anything is written (undefined when there is no file yet). */
export async function withSqliteTarget<T>(target: string, use: (db: Db) => Promise<T>): Promise<T | undefined> {
  if (!fs.existsSync(target)) return undefined
  const handle = await openSqlite(target)
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: handle }) })
  try {
    return await use(db)
  } finally {
    await db.destroy()
  }
}

/** Every table and view in a SQLite database but SQLite's own (sqlite_*), by name. */
export async function sqliteTables(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from sqlite_master where type in ('table', 'view') and substr(name, 1, 7) <> 'sqlite_' order by name`.execute(db)
  return rows.map((row) => row.name)
}

/** Refuses a target that some other process (a running server) still has open. */
export function assertSqliteTargetClosed(target: string): void {
  // When the last connection to a WAL database closes, SQLite folds the WAL
  // into the file and removes it; withSqliteTarget just closed ours, so a WAL
  // still there is another connection's, a server's, which would go on
  // writing into the file we are about to replace.
  if (fs.existsSync(`${target}-wal`)) {
    throw new Conflict(`${target} is open in another process (a server still running on it?): stop the servers before restoring`)
  }
}

/**
 * Puts the backup's database file in place of `target`: copied next to it
 * (the same file system, so the final rename is atomic), checked with
 * `PRAGMA integrity_check`, then renamed over it. Readable by its owner only:
 * it holds the site secret and every password and token hash.
 */
export async function restoreSqlite(backupFile: string, target: string): Promise<void> {
  fs.mkdirSync(path.dirname(target), { recursive: true })
  const temporary = `${target}.restoring-${randomUUID()}`
  try {
    fs.copyFileSync(backupFile, temporary, fs.constants.COPYFILE_EXCL)
    fs.chmodSync(temporary, 0o600)
    fsync(temporary)
    const copy = await openSqlite(temporary)
    try {
      const problems = (copy.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check)
      if (problems.join() !== 'ok') throw new BadRequest(`the backup's packs.db fails SQLite's integrity check (${problems[0]}): nothing was restored`)
    } finally {
      copy.close()
    }
    // Whatever journal a previous database left beside the target belongs to that one, not to the restored file.
    for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(`${target}${suffix}`, { force: true })
    fs.renameSync(temporary, target)
    fsync(path.dirname(target))
  } finally {
    fs.rmSync(temporary, { force: true })
  }
}

/** Waits for a file's (or a directory's entries') bytes to reach the disk: a restore must survive a power cut that follows it. */
function fsync(file: string): void {
  const fd = fs.openSync(file, 'r')
  try {
    fs.fsyncSync(fd)
  } finally {
    fs.closeSync(fd)
  }
}
