// Backups of a running site (`packs backup <dir>`) and their restore into an
// empty one (`packs restore <dir>`), on either backend, with nothing but Packs
// and the database's own tools: SQLite's online backup API, or PostgreSQL's
// pg_dump and pg_restore (src/maintenance/backup-sqlite.ts, backup-postgres.ts),
// then every stored file the database names, read through the FileStore
// (local disk or any S3-compatible bucket), with its SHA-256 in a manifest.
//
// Unlike `packs export` (src/maintenance/transfer.ts), which writes rows as
// JSON so a site can move between engines, a backup is the engine's own copy
// of everything in the database (every table, index, trigger and sequence,
// the migrations table included) and restores onto the same engine.
import fs from 'node:fs'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { MIGRATION_NAMES, openDatabase, packsTables, type Db, type Engine } from '../db/index.js'
import { BadRequest, Conflict } from '../errors.js'
import type { FileStore } from '../storage/index.js'
import { countRows, filesNamed, hasPacksTables, migrationsRun, type Counts, type NamedFile } from './backup-repository.js'
import { assertPostgresTargetIdle, postgresTables, restorePostgres, snapshotPostgres } from './backup-postgres.js'
import { assertSqliteTargetClosed, restoreSqlite, snapshotSqlite, sqliteTables, withSqliteTarget } from './backup-sqlite.js'
import { firstTableWithRows } from './transfer-repository.js'
import { copyToPrivateFile, hashFile, openPrivateFile, privateDir, readHashed, readManifestJson, writePrivateFile, type Digest } from './private-files.js'

export const BACKUP_FORMAT = 'packs-site-backup'
export const BACKUP_VERSION = 1

const DATABASE_FILE: Record<Engine, string> = { sqlite: 'packs.db', postgres: 'packs.dump' }
const ENGINE_NAME: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' }

export interface BackupManifest {
  format: typeof BACKUP_FORMAT
  version: number
  created_at: string
  database: {
    engine: Engine
    /** packs.db (SQLite) or packs.dump (pg_dump's custom format), beside this manifest. */
    file: string
    sha256: string
    size: number
    /** What made it: "SQLite 3.46.1 online backup", "pg_dump 15.18". */
    tool: string
    /** PostgreSQL only: pg_dump's major version (pg_restore must be at least as new). */
    tool_major?: number
  }
  /** The migrations the backed-up database had run: a target set up by a newer release is refused. */
  migrations: string[]
  counts: Counts
  /** Every stored file the database names, by storage key (files/<key>): its bytes' SHA-256 and size. */
  files: Record<string, Digest>
  /** Files the database names that the store could not give as the rows describe them (already lost from the site). */
  problems: string[]
}

export interface BackupReport {
  engine: Engine
  counts: Counts
  databaseBytes: number
  files: number
  bytes: number
  problems: string[]
}

export type RestoreReport = BackupReport

/**
 * A file named by one snapshot may be deleted (its pack deleted) before the
 * copy reaches it; the database is then taken again, up to this many times in
 * all, so the backup's rows and files are of one moment.
 */
const MAX_ROUNDS = 5

// Everything a backup writes is 0700/0600 (src/maintenance/private-files.ts): it holds the site secret.
const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
const SHA256 = /^[0-9a-f]{64}$/

function engineOf(databaseUrl: string): Engine {
  return databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres'
}

function sqlitePath(databaseUrl: string): string {
  const file = databaseUrl.slice('sqlite:'.length)
  if (file === ':memory:') throw new BadRequest('DATABASE_URL is sqlite::memory:, which holds nothing to back up or restore into')
  return path.resolve(file)
}

interface Snapshot {
  named: NamedFile[]
  counts: Counts
  migrations: string[]
  tool: string
  toolMajor?: number
}

async function readSnapshot(db: Db): Promise<Omit<Snapshot, 'tool' | 'toolMajor'>> {
  if (!(await hasPacksTables(db))) throw new BadRequest('the database has no Packs tables: there is no site to back up (check DATABASE_URL)')
  return { named: await filesNamed(db), counts: await countRows(db), migrations: await migrationsRun(db) }
}

/** Writes the database's copy into `file` (created 0600 here) and reads, from the same snapshot, what it names. */
async function snapshotDatabase(databaseUrl: string, file: string): Promise<Snapshot> {
  fs.rmSync(file, { force: true })
  const fd = openPrivateFile(file)
  if (engineOf(databaseUrl) === 'sqlite') {
    fs.closeSync(fd)
    const { result, tool } = await snapshotSqlite(sqlitePath(databaseUrl), file, readSnapshot)
    return { ...result, tool }
  }
  const db = await openDatabase(databaseUrl)
  try {
    const { result, tool, toolMajor } = await snapshotPostgres(db, databaseUrl, fd, readSnapshot)
    return { ...result, tool, toolMajor }
  } finally {
    fs.closeSync(fd)
    await db.destroy()
  }
}

/** Copies one stored object into `file` (0600); undefined when the store has no such object. */
async function copyStored(store: FileStore, key: string, file: string): Promise<Digest | undefined> {
  let source: Readable
  try {
    source = await store.get(key)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  return copyToPrivateFile(source, file)
}

export interface BackupOptions {
  /** Called after each database snapshot, before its files are copied (tests: change the site in between). */
  afterSnapshot?: () => Promise<void>
}

/**
 * Backs up the site DATABASE_URL and `store` hold into `dir` (new or empty),
 * while servers keep running: the database's own consistent copy first, then
 * every stored file that copy names, then manifest.json (last: a directory
 * without one is a backup that did not finish). Everything is 0700/0600.
 */
export async function backupSite(databaseUrl: string, store: FileStore, dir: string, options: BackupOptions = {}): Promise<BackupReport> {
  const existed = fs.existsSync(dir)
  if (existed && fs.readdirSync(dir).length > 0) throw new Conflict(`${dir} is not empty; back up into a new directory`)
  const engine = engineOf(databaseUrl)
  privateDir(dir)
  const filesDir = path.join(dir, 'files')
  try {
    privateDir(filesDir)
    const databaseFile = path.join(dir, DATABASE_FILE[engine])
    const copied = new Map<string, Digest>()
    let missingBefore = new Set<string>()
    let snapshot: Snapshot
    let missing: NamedFile[]
    for (let round = 1; ; round++) {
      // The database first, the files second. A row names a file only once the
      // file's bytes are stored (an upload completes before its row is written),
      // so every file this snapshot names was in the store when it was taken;
      // copied the other way round, rows written meanwhile would name files the
      // backup lacks.
      snapshot = await snapshotDatabase(databaseUrl, databaseFile)
      await options.afterSnapshot?.()
      missing = []
      const named = new Set(snapshot.named.map((file) => file.storage_key))
      for (const file of snapshot.named) {
        if (copied.has(file.storage_key)) continue
        if (!SAFE_KEY.test(file.storage_key)) throw new Error(`files row with an invalid storage key: ${JSON.stringify(file.storage_key).slice(0, 80)}`)
        const got = await copyStored(store, file.storage_key, path.join(filesDir, file.storage_key))
        if (got) copied.set(file.storage_key, got)
        else missing.push(file)
      }
      // Copied after an earlier snapshot, deleted with its rows since: not part of this moment.
      for (const key of copied.keys()) {
        if (named.has(key)) continue
        fs.rmSync(path.join(filesDir, key))
        copied.delete(key)
      }
      // Only deleting a pack (or a version, an upload) after the snapshot takes
      // a named file away: the next snapshot no longer names it. A file that
      // two snapshots in a row name and the store lacks both times was lost
      // before the backup began (packs doctor reports it).
      if (missing.every((file) => missingBefore.has(file.storage_key)) || round === MAX_ROUNDS) break
      missingBefore = new Set(missing.map((file) => file.storage_key))
    }
    const problems = missing.map((file) => `file ${file.storage_key}: the database names it (${file.size} bytes) but the store has no such object; the backup has its rows without its bytes`)
    for (const file of snapshot.named) {
      const got = copied.get(file.storage_key)
      if (got && (got.sha256 !== file.sha256 || got.size !== file.size)) {
        problems.push(`file ${file.storage_key}: the store holds ${got.size} bytes with SHA-256 ${got.sha256}, but the database says ${file.size} bytes with SHA-256 ${file.sha256}; the backup has the store's bytes`)
      }
    }
    const database = await hashFile(databaseFile)
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      created_at: new Date().toISOString(),
      database: {
        engine,
        file: DATABASE_FILE[engine],
        ...database,
        tool: snapshot.tool,
        ...(snapshot.toolMajor !== undefined ? { tool_major: snapshot.toolMajor } : {}),
      },
      migrations: snapshot.migrations,
      counts: snapshot.counts,
      files: Object.fromEntries([...copied].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      problems,
    }
    writePrivateFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n', { fsync: true })
    const bytes = [...copied.values()].reduce((sum, file) => sum + file.size, 0)
    return { engine, counts: snapshot.counts, databaseBytes: database.size, files: copied.size, bytes, problems }
  } catch (error) {
    // Nothing half-written is left to be taken for a backup (or to make the next run refuse the directory).
    if (existed) for (const entry of fs.readdirSync(dir)) fs.rmSync(path.join(dir, entry), { recursive: true, force: true })
    else fs.rmSync(dir, { recursive: true, force: true })
    throw error
  }
}

/** The manifest of a finished backup, every field checked: it names the files restore opens and writes. */
export function readBackupManifest(dir: string): BackupManifest {
  const manifest = readManifestJson(dir, 'packs backup') as BackupManifest
  const file = path.join(dir, 'manifest.json')
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
  const isSize = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0
  if (!isObject(manifest) || manifest.format !== BACKUP_FORMAT) throw new BadRequest(`${dir} is not a packs backup (packs export writes another kind: restore it with packs import)`)
  if (manifest.version !== BACKUP_VERSION) {
    throw new BadRequest(`${dir} is a packs backup of version ${String(manifest.version).slice(0, 20)}; this release restores version ${BACKUP_VERSION} (a newer backup needs a newer release)`)
  }
  const database = manifest.database as unknown
  const damaged = (what: string) => new BadRequest(`${file}: ${what}; the backup is damaged, nothing was restored`)
  if (!isObject(database) || (database.engine !== 'sqlite' && database.engine !== 'postgres')) throw damaged('no database engine')
  if (database.file !== DATABASE_FILE[database.engine] || typeof database.sha256 !== 'string' || !SHA256.test(database.sha256) || !isSize(database.size)) {
    throw damaged('the database entry is not what a backup writes')
  }
  if (database.engine === 'postgres' && !Number.isSafeInteger(database.tool_major)) throw damaged('no pg_dump version')
  if (!Array.isArray(manifest.migrations) || !manifest.migrations.every((name) => typeof name === 'string')) throw damaged('no list of migrations')
  if (!isObject(manifest.files)) throw damaged('no list of files')
  if (!Array.isArray(manifest.problems) || !manifest.problems.every((line) => typeof line === 'string')) throw damaged('no list of problems')
  for (const [key, entry] of Object.entries(manifest.files as Record<string, unknown>)) {
    if (!SAFE_KEY.test(key) || !isObject(entry) || typeof entry.sha256 !== 'string' || !SHA256.test(entry.sha256) || !isSize(entry.size)) {
      throw damaged(`the files entry ${JSON.stringify(key).slice(0, 80)} is not a storage key with a SHA-256 and a size`)
    }
  }
  return manifest
}

/** How many of another application's tables a refusal names (the rest are counted). */
const NAMED_TABLES = 10

/**
 * Refuses a target database that holds a site, whose schema is newer than the
 * backup's, or that holds any table that is not Packs'. A restore replaces
 * Packs' tables (SQLite: the whole file; PostgreSQL: pg_restore --clean drops
 * every table the dump has before it recreates it), so another application's
 * tables of the same names (users, sessions) would be lost, and any other
 * table would be left sharing a database with the site. Packs' tables exist
 * only once its first migration ran: before that every table is another's,
 * whatever its name.
 */
async function assertEmptyDatabase(db: Db, engine: Engine, manifest: BackupManifest): Promise<void> {
  const tables = engine === 'sqlite' ? await sqliteTables(db) : await postgresTables(db)
  if (tables.length === 0) return
  const ran = tables.includes('kysely_migration') ? await migrationsRun(db) : []
  const isSite = ran.includes(MIGRATION_NAMES[0]!)
  if (isSite) {
    const occupied = await firstTableWithRows(db, ['users', 'files', 'packs'])
    if (occupied) throw new Conflict(`the target database is not empty (${occupied} has rows); restore into a new, empty database`)
    // Tables of a newer release's migrations would be left beside the restored ones, which the next start would try to create again.
    const newer = ran.filter((name) => !manifest.migrations.includes(name))
    if (newer.length > 0) throw new Conflict(`the target database was set up by a newer release than the backup (migration ${newer[0]}); restore into a new, empty database`)
  }
  const ours = packsTables(engine)
  // Kysely's two tables, still empty, are what a first start that failed in its first migration leaves.
  const kyselyOnly = (name: string) => ran.length === 0 && (name === 'kysely_migration' || name === 'kysely_migration_lock')
  const foreign = tables.filter((name) => (isSite ? !ours.has(name) : !kyselyOnly(name)))
  if (foreign.length > 0) {
    const named = foreign.slice(0, NAMED_TABLES).join(', ') + (foreign.length > NAMED_TABLES ? ` and ${foreign.length - NAMED_TABLES} more` : '')
    throw new Conflict(`the target database holds ${foreign.length === 1 ? 'a table' : 'tables'} that ${foreign.length === 1 ? 'is' : 'are'} not Packs' (${named}), `
      + 'which the restore would drop or leave beside the site; nothing was changed: restore into a new, empty database')
  }
}

/**
 * Restores a backup into an empty site (no server running on it): the
 * database's copy and every file are checked against the manifest's SHA-256s;
 * the files go into the store first, the database last (one rename on
 * SQLite, one transaction on PostgreSQL), and a failure removes the files it
 * wrote, so the target is never left with rows whose bytes are missing. An
 * interrupted restore may be run again: objects of this backup already in the
 * store are written over.
 */
export async function restoreSite(databaseUrl: string, store: FileStore, dir: string): Promise<RestoreReport> {
  const manifest = readBackupManifest(dir)
  const engine = engineOf(databaseUrl)
  if (manifest.database.engine !== engine) {
    throw new BadRequest(`${dir} is a backup of a ${ENGINE_NAME[manifest.database.engine]} site and DATABASE_URL names ${ENGINE_NAME[engine]}: `
      + `restore it onto ${ENGINE_NAME[manifest.database.engine]} (or move between engines with packs export and packs import)`)
  }
  // Everything read from the backup is checked before anything is written.
  const databaseFile = path.join(dir, manifest.database.file)
  if (!fs.existsSync(databaseFile)) throw new BadRequest(`${dir} lacks ${manifest.database.file}: the backup is incomplete, nothing was restored`)
  const database = await hashFile(databaseFile)
  if (database.sha256 !== manifest.database.sha256 || database.size !== manifest.database.size) {
    throw new BadRequest(`${manifest.database.file}: SHA-256 ${database.sha256} (${database.size} bytes) does not match the manifest's ${manifest.database.sha256} (${manifest.database.size} bytes): the backup is damaged, nothing was restored`)
  }
  const keys = Object.keys(manifest.files).sort()
  for (const key of keys) {
    let size: number | undefined
    try {
      const stats = fs.statSync(path.join(dir, 'files', key))
      if (stats.isFile()) size = stats.size
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    if (size !== manifest.files[key]!.size) {
      throw new BadRequest(`files/${key}: ${size === undefined ? 'missing' : `${size} bytes`} in the backup, the manifest says ${manifest.files[key]!.size} bytes: the backup is damaged, nothing was restored`)
    }
  }

  const target = engine === 'sqlite' ? sqlitePath(databaseUrl) : undefined
  if (target !== undefined) {
    await withSqliteTarget(target, (db) => assertEmptyDatabase(db, 'sqlite', manifest))
    assertSqliteTargetClosed(target)
  } else {
    await withPostgres(databaseUrl, async (db) => {
      await assertEmptyDatabase(db, 'postgres', manifest)
      await assertPostgresTargetIdle(db)
    })
  }
  for await (const object of store.list()) {
    if (!(object.key in manifest.files)) {
      throw new Conflict(`the target store is not empty (it holds ${object.key}, which is not in this backup); restore into an empty directory or bucket`)
    }
  }

  const written: string[] = []
  let bytes = 0
  try {
    for (const key of keys) {
      const expected = manifest.files[key]!
      const source = readHashed(path.join(dir, 'files', key))
      await store.put(key, source.stream)
      written.push(key)
      const actual = source.digest()
      if (actual.sha256 !== expected.sha256 || actual.size !== expected.size) {
        throw new BadRequest(`files/${key}: SHA-256 ${actual.sha256} (${actual.size} bytes) does not match the manifest's ${expected.sha256} (${expected.size} bytes): the backup is damaged, nothing was restored`)
      }
      bytes += actual.size
    }
    if (target !== undefined) await restoreSqlite(databaseFile, target)
    else await restorePostgres(databaseFile, databaseUrl, manifest.database.tool_major!)
  } catch (error) {
    await Promise.all(written.map((key) => store.delete(key).catch(() => {})))
    throw error
  }
  const counts = target !== undefined
    ? (await withSqliteTarget(target, countRows))!
    : await withPostgres(databaseUrl, countRows)
  return { engine, counts, databaseBytes: database.size, files: written.length, bytes, problems: manifest.problems }
}

async function withPostgres<T>(databaseUrl: string, use: (db: Db) => Promise<T>): Promise<T> {
  const db = await openDatabase(databaseUrl)
  try {
    return await use(db)
  } finally {
    await db.destroy()
  }
}

/** "3 users, 5 packs, 9 versions, 21 files" */
export function formatCounts(counts: Counts): string {
  return Object.entries(counts).map(([table, n]) => `${n} ${n === 1 ? table.replace(/s$/, '') : table}`).join(', ')
}
