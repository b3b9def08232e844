// The database a test site runs on. SQLite in the data directory by default;
// when PACKS_TEST_DATABASE_URL names a PostgreSQL server (an admin URL, as
// scripts/with-postgres.sh sets it), a fresh database per site, dropped again
// when the site closes, so tests never see each other's rows.
import { randomBytes } from 'node:crypto'
import pg from 'pg'

export interface TestDatabase {
  /** The DATABASE_URL to give the site, or undefined for the default SQLite file. */
  url: string | undefined
  drop(): Promise<void>
}

export const TEST_DATABASE_URL = process.env.PACKS_TEST_DATABASE_URL || undefined

/** Runs one statement on the admin database. */
async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!TEST_DATABASE_URL) return { url: undefined, drop: async () => {} }
  const name = `packs_test_${randomBytes(6).toString('hex')}`
  // A locale-aware default collation (as production databases usually have),
  // where "_" and "-" are ignored and case interleaves: the schema must pin
  // its own byte order (collate "C") for the suite to pass. Servers built
  // without ICU get the cluster's default.
  try {
    await admin(`create database ${name} locale_provider icu icu_locale 'en-US' template template0`)
  } catch {
    await admin(`create database ${name}`)
  }
  const url = new URL(TEST_DATABASE_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    // FORCE: a connection a test left open (a pool not yet ended) must not keep the database alive.
    drop: () => admin(`drop database if exists ${name} with (force)`),
  }
}

/** True when the suite runs on PostgreSQL (tests that touch engine-specific SQL branch on it). */
export const onPostgres = TEST_DATABASE_URL !== undefined
