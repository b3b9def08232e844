// The SQL of `packs backup` / `packs restore` (src/maintenance/backup.ts):
// what a database snapshot names and holds, and whether a target is empty.
// The same queries run on both engines; the caller passes the snapshot's own
// handle (the copied SQLite file, or the PostgreSQL transaction pg_dump shares).
import { sql } from 'kysely'
import type { Db } from '../db/index.js'

/** A stored file as the database knows it: what the backup copies and checks. */
export interface NamedFile {
  storage_key: string
  sha256: string
  size: number
}

/** Every stored file the rows name (uploads, thumbnails, media and versions all point at files rows). */
export async function filesNamed(db: Db): Promise<NamedFile[]> {
  return db.selectFrom('files').select(['storage_key', 'sha256', 'size']).orderBy('storage_key').execute()
}

/** The counts a backup and a restore print. */
export const COUNTED_TABLES = ['users', 'packs', 'versions', 'files'] as const
export type Counts = Record<(typeof COUNTED_TABLES)[number], number>

export async function countRows(db: Db): Promise<Counts> {
  const counts = {} as Counts
  for (const table of COUNTED_TABLES) {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()
    counts[table] = Number(row.n)
  }
  return counts
}

/** The migrations the database has run, by name (Kysely's own table): a backup records its schema's age. */
export async function migrationsRun(db: Db): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true })
  if (!tables.some((table) => table.name === 'kysely_migration')) return []
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)
  return rows.map((row) => row.name)
}

/** The tables of the database (Kysely's own excepted), whichever the engine. */
export async function tableNames(db: Db): Promise<string[]> {
  return (await db.introspection.getTables()).map((table) => table.name)
}

/** True when the database has Packs' tables at all (a site started at least once, or a CLI run on it). */
export async function hasPacksTables(db: Db): Promise<boolean> {
  const names = await tableNames(db)
  return names.includes('users') && names.includes('files')
}
