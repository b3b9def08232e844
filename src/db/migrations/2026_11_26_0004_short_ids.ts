import type { Kysely } from 'kysely'
import type { Database } from '../schema.js'
import { fillMissingShortIds } from '../short-ids.js'

// Short ids (src/db/short-ids.ts): 8 base62 characters per pack and
// version, the shape of Modrinth's ids, for the Modrinth-compatible API.
// Nullable, so the column can be added to a table with
// rows; every row gets one here, and every new row when it is inserted.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('packs').addColumn('short_id', 'text').execute()
  await db.schema.alterTable('versions').addColumn('short_id', 'text').execute()
  await db.schema.createIndex('packs_short_id').on('packs').column('short_id').unique().execute()
  await db.schema.createIndex('versions_short_id').on('versions').column('short_id').unique().execute()
  await fillMissingShortIds(db as unknown as Kysely<Database>)
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('versions_short_id').execute()
  await db.schema.dropIndex('packs_short_id').execute()
  await db.schema.alterTable('versions').dropColumn('short_id').execute()
  await db.schema.alterTable('packs').dropColumn('short_id').execute()
}
