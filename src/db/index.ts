// Opens the configured database and brings its schema up to date.
// This is the only module that knows which SQL engine is underneath.
import fs from 'node:fs'
import path from 'node:path'
import type SQLite from 'better-sqlite3'
// Kysely's dialects are plain classes that take a driver; the drivers
// themselves (pg, better-sqlite3) are imported only for the URL that needs one.
import { Kysely, Migrator, PostgresDialect, SqliteAdapter, SqliteDialect, sql, type Driver, type Migration, type MigrationProvider } from 'kysely'
import { ConfigError } from '../config/index.js'
import { PRIVATE_DIR, PRIVATE_FILE, tightenMode } from '../config/file-modes.js'
import type { Database } from './schema.js'
import * as initial from './migrations/2026_11_22_0001_initial.js'
import * as lifecycle from './migrations/2026_11_23_0002_lifecycle.js'
import * as fileHashes from './migrations/2026_11_24_0003_file_hashes.js'
import * as shortIds from './migrations/2026_11_26_0004_short_ids.js'
import * as fileUseIndexes from './migrations/2026_11_26_0005_file_use_indexes.js'
import * as tagUses from './migrations/2026_11_26_0006_tag_uses.js'
import * as packListing from './migrations/2026_11_26_0007_pack_listing.js'
import * as archiveClaims from './migrations/2026_11_28_0008_archive_claims.js'
import * as packTeams from './migrations/2026_11_28_0009_pack_teams.js'
import * as packSearch from './migrations/2026_11_28_0010_pack_search.js'
import * as searchChanges from './migrations/2026_11_28_0011_search_changes.js'
import * as followsWebhooks from './migrations/2026_12_01_0012_follows_webhooks.js'
import * as feedIndexes from './migrations/2026_12_01_0013_feed_indexes.js'

export type Db = Kysely<Database>

export type Engine = 'sqlite' | 'postgres'

// Listed by hand rather than read from the folder so the set is fixed at build
// time and ordered by name; add new migrations here. Each is told the engine,
// for the few column declarations that must differ (see the initial one).
function migrationsFor(engine: Engine): Record<string, Migration> {
  return {
    '2026_11_22_0001_initial': { up: (db) => initial.up(db, engine), down: initial.down },
    '2026_11_23_0002_lifecycle': { up: (db) => lifecycle.up(db, engine), down: lifecycle.down },
    '2026_11_24_0003_file_hashes': { up: fileHashes.up, down: fileHashes.down },
    '2026_11_26_0004_short_ids': { up: shortIds.up, down: shortIds.down },
    '2026_11_26_0005_file_use_indexes': { up: fileUseIndexes.up, down: fileUseIndexes.down },
    '2026_11_26_0006_tag_uses': { up: (db) => tagUses.up(db, engine), down: (db) => tagUses.down(db, engine) },
    '2026_11_26_0007_pack_listing': { up: (db) => packListing.up(db, engine), down: (db) => packListing.down(db, engine) },
    '2026_11_28_0008_archive_claims': { up: archiveClaims.up, down: archiveClaims.down },
    '2026_11_28_0009_pack_teams': { up: packTeams.up, down: packTeams.down },
    '2026_11_28_0010_pack_search': { up: (db) => packSearch.up(db, engine), down: (db) => packSearch.down(db, engine) },
    '2026_11_28_0011_search_changes': { up: (db) => searchChanges.up(db, engine), down: (db) => searchChanges.down(db, engine) },
    '2026_12_01_0012_follows_webhooks': { up: followsWebhooks.up, down: followsWebhooks.down },
    '2026_12_01_0013_feed_indexes': { up: feedIndexes.up, down: feedIndexes.down },
  }
}

/** The name of every migration this release has, in order. */
export const MIGRATION_NAMES: readonly string[] = Object.keys(migrationsFor('sqlite'))

/**
 * Every table (and view) this release's migrations create, with Kysely's own
 * two, on each engine: what `packs restore` accepts in a target database, where
 * anything else is another application's. SQLite also has the title search's
 * FTS5 tables and the shadow tables SQLite keeps for it. Add a new migration's
 * tables here: test/backends/packs-tables.test.ts compares this with what the
 * migrations really create, on both engines.
 */
export function packsTables(engine: Engine): ReadonlySet<string> {
  const shared = [
    'api_tokens', 'archive_claims', 'archive_permits', 'audit_log', 'categories', 'download_seen', 'drafts', 'feed_tokens', 'files',
    'kysely_migration', 'kysely_migration_lock', 'notification_fanouts', 'notifications', 'pack_counts', 'pack_follows', 'pack_id_holds', 'pack_media',
    'pack_members', 'pack_tags', 'pack_daily_downloads', 'pack_releases', 'pack_search', 'pack_transfers', 'packs',
    'search_changes', 'search_terms', 'sessions', 'settings', 'tags', 'token_packs', 'uploads', 'users', 'versions',
    'webhook_attempts', 'webhook_deliveries', 'webhooks',
  ]
  const sqliteOnly = ['packs_title_search', 'pack_text']
    .flatMap((table) => ['', '_config', '_content', '_data', '_docsize', '_idx'].map((suffix) => `${table}${suffix}`))
  return new Set(engine === 'sqlite' ? [...shared, ...sqliteOnly] : shared)
}

/** The engine under a database or one of its transactions. */
export function engineOf(db: Db): Engine {
  return db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres'
}

// Which engine each opened database runs on, for migrateToLatest.
const engines = new WeakMap<Db, Engine>()

/**
 * Opens (without a round trip) the database DATABASE_URL names; migrateToLatest
 * then connects. Only that engine's driver is loaded.
 */
export async function openDatabase(databaseUrl: string): Promise<Db> {
  let db: Db
  let engine: Engine
  if (databaseUrl.startsWith('sqlite:')) {
    db = await openSqlite(databaseUrl.slice('sqlite:'.length))
    engine = 'sqlite'
  } else if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    db = await openPostgres(databaseUrl)
    engine = 'postgres'
  } else {
    throw new ConfigError('DATABASE_URL: must be sqlite:<path> or postgres://...')
  }
  engines.set(db, engine)
  return db
}

const PG_INT8 = 20

/**
 * pg returns int8 (bigint columns such as files.size) as strings because they
 * can exceed 2^53; file sizes and row counts never do, and SQLite returns them
 * as numbers, so both engines give the repositories numbers. A value past
 * 2^53 fails the query rather than coming back rounded.
 */
function parseInt8(value: string): number {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new Error(`bigint ${value} does not fit a JavaScript number`)
  return n
}

async function openPostgres(url: string): Promise<Db> {
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({
    connectionString: url,
    // Without a timeout an unreachable host (packets dropped) would hang start-up forever.
    connectionTimeoutMillis: 10_000,
    // Per pool, not pg.types.setTypeParser: nothing else in the process is affected.
    types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === PG_INT8 && format !== 'binary' ? parseInt8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser },
  })
  // An idle connection that the server drops (restart, failover) is reported
  // here; the pool discards it and the next query opens a new one. Without a
  // listener the event would crash the process.
  pool.on('error', () => {})
  // A connection dropped while checked out (between two statements of a transaction, say) reports it on the
  // client, which the pool listens to only while the client is idle: without a listener of its own that event
  // too would crash the process. The statement that uses the dead connection next fails as any query does.
  pool.on('connect', (client) => client.on('error', () => {}))
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
}

const SQLITE_MMAP_BYTES = 1024 * 1024 * 1024
const SQLITE_CACHE_KIB = 64 * 1024

/**
 * better-sqlite3, loaded on demand, in the version this Node.js runs: 13 (Node-API, its binaries in the
 * package) on Node 22 and later; 12 (an npm alias, `better-sqlite3-node20`, an optional dependency) on
 * Node 20. 12 cannot run on Node 24.19 and later: Node's `node::ObjectWrap` there registers an environment
 * cleanup hook that 12's statements remove again when they are garbage-collected, and Node aborts the
 * process (nodejs/node#65446; every server start on 24.21.0 aborted). 13 segfaults on Node 20. When Node 20
 * is dropped, the alias goes (docs/running.md#nodejs-versions).
 */
export async function loadSqlite(version: string = process.versions.node): Promise<typeof SQLite> {
  if (Number(version.split('.')[0]) >= 22) return (await import('better-sqlite3')).default
  try {
    // The alias has no types of its own: it is the same API as the types of better-sqlite3.
    return (await import('better-sqlite3-node20' as string) as { default: typeof SQLite }).default
  } catch (error) {
    // An optional dependency: `npm ci` goes on when it cannot build it (no compiler), so say what is missing.
    throw new ConfigError(`SQLite on Node.js ${version} needs the optional package better-sqlite3-node20, which could not be loaded (${(error as Error).message.split('\n')[0]}): install a C++ toolchain and run \`npm ci\` again, or use Node.js 22 or later`)
  }
}

async function openSqlite(file: string): Promise<Db> {
  const BetterSqlite3 = await loadSqlite()
  if (file !== ':memory:') {
    try {
      // New directories (the data directory, by default) are 0700; an existing one is left as it is.
      fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: PRIVATE_DIR })
    } catch (error) {
      throw new ConfigError(`DATABASE_URL: cannot create the directory for ${file}: ${(error as Error).message}`)
    }
    try {
      makeDatabasePrivate(file)
    } catch (error) {
      throw new ConfigError(`DATABASE_URL: cannot make SQLite database ${file} private (0600): ${(error as Error).message}`)
    }
  }
  let sqlite: SQLite.Database
  try {
    sqlite = new BetterSqlite3(file)
    // WAL lets readers (the update-check) run while a publish writes.
    sqlite.pragma('journal_mode = WAL')
    sqlite.pragma('foreign_keys = ON')
    sqlite.pragma('busy_timeout = 5000')
    sqlite.pragma('synchronous = NORMAL')
    // Reads through a memory map and a 64 MiB page cache instead of a read() system call per page: at
    // 100,000 packs (a 700 MB file) a page of 20 packs touched ~300 pages not in SQLite's default 2 MiB
    // cache, about 0.7 ms a query. The map is the OS's page cache, shared, and bounded by this size.
    sqlite.pragma(`mmap_size = ${SQLITE_MMAP_BYTES}`)
    sqlite.pragma(`cache_size = -${SQLITE_CACHE_KIB}`)
  } catch (error) {
    throw new ConfigError(`DATABASE_URL: cannot open SQLite database ${file}: ${(error as Error).message}`)
  }
  return new Kysely<Database>({ dialect: new TurnTakingSqliteDialect({ database: withStatementCache(sqlite) }) })
}

/**
 * The database holds the site secret, the signing key and every password
 * hash: 0600. SQLite gives the -wal, -shm and -journal files it creates the
 * mode of the database file, so the file is created 0600 here, before SQLite
 * opens it (an empty file is an empty database), and what already exists of
 * them loses the group's and others' permissions (server start-up has said so
 * already, src/maintenance/private-files.ts; the CLI does it quietly).
 */
function makeDatabasePrivate(file: string): void {
  try {
    fs.closeSync(fs.openSync(file, 'wx', PRIVATE_FILE))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  // SQLite follows a link to the database and keeps its journals beside the file it points at.
  const real = fs.realpathSync(file)
  for (const suffix of ['', '-wal', '-shm', '-journal']) {
    try {
      tightenMode(`${real}${suffix}`)
    } catch (error) {
      // Another user's file that we may write into: server start-up has warned that it stays as it is.
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') throw error
    }
  }
}

/** How long SQLite work may hold the event loop before the next query waits for a turn (see Turns). */
const TURN_MS = 1

/**
 * better-sqlite3 answers on the event loop's own thread, and Kysely's awaits
 * around it resolve at once, so a request that runs several queries (a page:
 * a count, a page of ids, the packs, their tags and versions) would hold the
 * loop from its first query to its last. Every other request, the
 * update-check included, waits that long. Before a query, once SQLite work has
 * held the loop for TURN_MS in this turn, the query waits for the next turn
 * (setImmediate): sockets are read and light requests answered in between. A
 * request that needs one query never waits; nothing waits on an idle site.
 */
class Turns {
  private turnStartedAt: number | undefined

  async take(): Promise<void> {
    const now = performance.now()
    if (this.turnStartedAt === undefined) {
      this.turnStartedAt = now
      // Runs at the end of this turn (before any query that waited for the next one).
      setImmediate(() => { this.turnStartedAt = undefined })
      return
    }
    if (now - this.turnStartedAt >= TURN_MS) await new Promise((resolve) => setImmediate(resolve))
  }
}

/** Kysely's SQLite dialect, whose queries (each taking the one connection) first take a turn (see Turns). */
class TurnTakingSqliteDialect extends SqliteDialect {
  private readonly turns = new Turns()

  override createDriver(): Driver {
    const driver = super.createDriver()
    const turns = this.turns
    // Before the connection is taken, so a waiting query holds nothing; a transaction's queries share one
    // connection and are not delayed again.
    return new Proxy(driver, {
      get(target, property, receiver) {
        if (property === 'acquireConnection') {
          return async () => {
            await turns.take()
            return target.acquireConnection()
          }
        }
        const value: unknown = Reflect.get(target, property, receiver)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  }
}

const STATEMENT_CACHE_SIZE = 256

/**
 * Kysely asks the driver to prepare every query anew; preparing costs several
 * times what running an indexed lookup does (measured 21 us vs 4 us), so
 * statements are kept by their SQL text. Queries are built from a fixed set of
 * shapes with bound parameters, so the set stays small; the bound is a guard.
 */
function withStatementCache(sqlite: SQLite.Database): { prepare(sql: string): SQLite.Statement; close(): void } {
  const statements = new Map<string, SQLite.Statement>()
  return {
    prepare(sql) {
      let statement = statements.get(sql)
      if (!statement) {
        statement = sqlite.prepare(sql)
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!)
        statements.set(sql, statement)
      }
      return statement
    },
    close: () => sqlite.close(),
  }
}

/** Applies pending migrations; throws (never exits quietly) when one fails. */
export async function migrateToLatest(db: Db): Promise<void> {
  const engine = engines.get(db) ?? 'sqlite'
  // A first round trip of its own, so an unreachable server or a refused login
  // is reported as that, in one line, rather than as a failed migration.
  try {
    await sql`select 1`.execute(db)
  } catch (error) {
    throw new ConfigError(`DATABASE_URL: cannot connect to the ${engine === 'postgres' ? 'PostgreSQL' : 'SQLite'} database: ${oneLine(error)}`)
  }
  const provider: MigrationProvider = { getMigrations: async () => migrationsFor(engine) }
  const migrator = new Migrator({ db, provider })
  const { error, results } = await migrator.migrateToLatest()
  const failed = results?.find((r) => r.status === 'Error')
  if (error || failed) {
    const name = failed ? ` ${failed.migrationName}` : ''
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error')
    throw new ConfigError(`database migration${name} failed: ${reason}`)
  }
}

/** One line from a driver error; a refused connection to a name with several addresses is an AggregateError with an empty message. */
function oneLine(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') {
    return error.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).join('; ')
  }
  const message = error instanceof Error ? error.message || ((error as NodeJS.ErrnoException).code ?? error.name) : String(error)
  return message.split('\n')[0]!
}
