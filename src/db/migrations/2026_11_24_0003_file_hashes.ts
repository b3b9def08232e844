import type { Kysely } from 'kysely'

// The update protocol: every answer carries the archive's SHA-1
// beside its SHA-256 (a vanilla server's resource-pack-sha1 and most
// launchers use SHA-1), and an updater may ask by either hash. Files stored
// before this migration have no SHA-1: it stays null until the start-up
// back-fill (src/maintenance/backfill.ts) has streamed each of them once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('files').addColumn('sha1', 'text').execute()
  await db.schema.createIndex('files_sha1').on('files').column('sha1').execute()
  await db.schema.createIndex('files_sha256').on('files').column('sha256').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('files_sha256').execute()
  await db.schema.dropIndex('files_sha1').execute()
  await db.schema.alterTable('files').dropColumn('sha1').execute()
}
