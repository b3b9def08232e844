// The SQL of `packs export` / `packs import` (src/maintenance/transfer.ts):
// whole tables read and written row by row, in an order the foreign keys
// accept. The caller opens the transaction and passes it as `db`.
import type { Db } from '../db/index.js'
import type { Database } from '../db/schema.js'

/** Parents before children, so rows can be inserted in this order with foreign keys on. */
export const TABLES = [
  'users', 'api_tokens', 'sessions', 'settings', 'categories', 'tags', 'files',
  'drafts', 'uploads', 'packs', 'pack_tags', 'pack_media', 'versions',
  'token_packs', 'pack_id_holds', 'audit_log', 'download_seen', 'archive_claims', 'archive_permits',
  'pack_members', 'pack_transfers', 'pack_daily_downloads',
  'pack_follows', 'notifications', 'feed_tokens', 'webhooks', 'webhook_deliveries', 'webhook_attempts',
] as const satisfies readonly (keyof Database)[]

export type Table = (typeof TABLES)[number]

/** Tables added by export version 2; a version-1 export has no file for them. */
export const TABLES_SINCE_VERSION_2 = ['token_packs', 'pack_id_holds', 'audit_log', 'download_seen'] as const satisfies readonly Table[]

/** Tables added by export version 3: whose bytes each archive is (migration 0008). */
export const TABLES_SINCE_VERSION_3 = ['archive_claims', 'archive_permits'] as const satisfies readonly Table[]

/** Tables added by export version 4: packs' teams, invitations and ownership offers (migration 0009). */
export const TABLES_SINCE_VERSION_4 = ['pack_members', 'pack_transfers'] as const satisfies readonly Table[]

/**
 * Tables added by export version 5: downloads per pack and day, the history trending adds up (migration 0010).
 * The search index itself (pack_search, pack_releases, search_terms, SQLite's pack_text) is not exported:
 * it is derived from the rows, and the import rebuilds it (src/packs/search-service.ts, indexMissingPacks).
 * Nor is search's change log (search_changes, migration 0011): its triggers log the imported packs as they
 * are written and indexed, and it matters only to the instances running on the database it was written in.
 */
export const TABLES_SINCE_VERSION_5 = ['pack_daily_downloads'] as const satisfies readonly Table[]

/**
 * Tables added by export version 6: follows, notifications, feed tokens, webhooks with their outbox and
 * delivery log (migration 0012). Secrets among them (a webhook's address and signing secret, a feed token)
 * travel sealed with the site secret, which the export carries in settings like the rest of what signs in:
 * an export is a secret as a whole (its files are private), and nothing in it is readable without that row.
 */
export const TABLES_SINCE_VERSION_6 = ['pack_follows', 'notifications', 'feed_tokens', 'webhooks', 'webhook_deliveries', 'webhook_attempts'] as const satisfies readonly Table[]

/** Rows per INSERT: well under SQLite's and PostgreSQL's limits on bound parameters. */
const INSERT_BATCH = 200

/**
 * Columns the database derives itself (triggers of migration 0007): left out
 * of exports and of imported rows, and recomputed on insert. search_seq is
 * SQLite's key into its title index: a copied one would collide.
 */
const DERIVED_COLUMNS: Partial<Record<Table, readonly string[]>> = { packs: ['owner_disabled', 'search_seq'] }

function withoutDerived(table: Table, row: Record<string, unknown>): Record<string, unknown> {
  const derived = DERIVED_COLUMNS[table]
  if (!derived) return row
  const copy = { ...row }
  for (const column of derived) delete copy[column]
  return copy
}

export async function selectAllRows(db: Db, table: Table): Promise<Record<string, unknown>[]> {
  const rows = await db.selectFrom(table).selectAll().execute()
  return DERIVED_COLUMNS[table] ? rows.map((row) => withoutDerived(table, row)) : rows
}

/** The first of `tables` that holds a row, if any. */
export async function firstTableWithRows(db: Db, tables: readonly Table[]): Promise<Table | undefined> {
  for (const table of tables) {
    const row = await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()
    if (Number(row.n) > 0) return table
  }
  return undefined
}

/** Rows as an export wrote them, for a table of the same schema version; the engine checks every constraint. */
export async function insertRows<T extends Table>(db: Db, table: T, rows: readonly Database[T][]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH) {
    const batch = rows.slice(i, i + INSERT_BATCH).map((row) => withoutDerived(table, row as unknown as Record<string, unknown>))
    await db.insertInto(table).values(batch as never).execute()
  }
}

export async function deleteAllSettings(db: Db): Promise<void> {
  await db.deleteFrom('settings').execute()
}
