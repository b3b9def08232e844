// The database a test site runs on. SQLite in the data directory by default;
// when PACKS_TEST_DATABASE_URL names a PostgreSQL server (an admin URL, as
// scripts/run-tests.js sets it for the scaled combination), a fresh database
// per site, dropped again when the site closes, so tests never see each
// other's rows.
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { PROJECT_ROOT } from '../../src/config/paths.js'
import { tempDir } from './temp.js'

export interface TestDatabase {
  /** The DATABASE_URL to give the site, or undefined for the default SQLite file. */
  url: string | undefined
  drop(): Promise<void>
}

export const TEST_DATABASE_URL = process.env.PACKS_TEST_DATABASE_URL || undefined

/** Runs statements on the admin database, one connection for all of them. */
async function admin(...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    for (const statement of statements) await client.query(statement)
  } finally {
    await client.end()
  }
}

function urlOf(name: string): string {
  const url = new URL(TEST_DATABASE_URL!)
  url.pathname = `/${name}`
  return url.toString()
}

// A locale-aware default collation (as production databases usually have),
// where "_" and "-" are ignored and case interleaves: the schema must pin its
// own byte order (collate "C") for the suite to pass. Servers built without
// ICU get the cluster's default.
async function createBlank(name: string): Promise<void> {
  try {
    await admin(`create database ${name} locale_provider icu icu_locale 'en-US' template template0`)
  } catch {
    await admin(`create database ${name}`)
  }
}

/**
 * `migrated`: a copy of a template database the migrations already ran on
 * (CREATE DATABASE ... TEMPLATE copies files, far cheaper than running every
 * migration again); otherwise empty. Both have the locale collation above.
 */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) return { url: undefined, drop: async () => {} }
  const name = `packs_test_${randomBytes(6).toString('hex')}`
  if (options.migrated) await admin(`create database ${name} template ${await migratedTemplate()}`)
  else await createBlank(name)
  return {
    url: urlOf(name),
    // FORCE: a connection a test left open (a pool not yet ended) must not keep the database alive.
    drop: () => admin(`drop database if exists ${name} with (force)`),
  }
}

let template: Promise<string> | undefined

/**
 * The template of migrated databases: made once per cluster and set of
 * migrations (its name carries their hash, so a cluster kept across changes
 * never hands out a stale schema); processes that need it at the same time
 * wait on an advisory lock while the first one builds it.
 */
function migratedTemplate(): Promise<string> {
  template ??= buildTemplate().catch((error: unknown) => {
    template = undefined
    throw error
  })
  return template
}

async function buildTemplate(): Promise<string> {
  const dbDir = path.join(PROJECT_ROOT, 'src', 'db')
  const hash = createHash('sha256')
  for (const file of ['index.ts', ...fs.readdirSync(path.join(dbDir, 'migrations')).sort().map((f) => `migrations/${f}`)]) {
    hash.update(file).update(fs.readFileSync(path.join(dbDir, file)))
  }
  const name = `packs_template_${hash.digest('hex').slice(0, 12)}`
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    await client.query('select pg_advisory_lock(4242)')
    const exists = await client.query('select 1 from pg_database where datname = $1', [name])
    if (exists.rowCount === 0) {
      const building = `${name}_building_${randomBytes(3).toString('hex')}`
      await createBlank(building)
      const { openDatabase, migrateToLatest } = await import('../../src/db/index.js')
      const db = await openDatabase(urlOf(building))
      try {
        await migrateToLatest(db)
      } finally {
        await db.destroy()
      }
      // Renamed only when complete: a process killed half-way never leaves a half-migrated template.
      await client.query(`alter database ${building} rename to ${name}`)
      await client.query(`alter database ${name} with is_template true allow_connections false`)
    }
  } finally {
    await client.end()
  }
  return name
}

/** True when the suite runs on PostgreSQL (tests that touch engine-specific SQL branch on it). */
export const onPostgres = TEST_DATABASE_URL !== undefined

/** The combination's database on its own, without an app (test/backends): fresh and migrated. */
export interface OpenTestDatabase {
  db: import('../../src/db/index.js').Db
  /** Closes the connection and removes the database. */
  close(): Promise<void>
}

export async function openTestDatabase(): Promise<OpenTestDatabase> {
  const { openDatabase, migrateToLatest } = await import('../../src/db/index.js')
  const database = await createTestDatabase({ migrated: true })
  const dir = database.url ? undefined : tempDir('packs-db-')
  const db = await openDatabase(database.url ?? `sqlite:${path.join(dir!, 'packs.db')}`)
  const close = async () => {
    await db.destroy()
    await database.drop()
    if (dir) fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    await migrateToLatest(db)
  } catch (error) {
    await close()
    throw error
  }
  return { db, close }
}
