import type { Kysely } from 'kysely'

// Which records use a stored file, by the file's id: asked when a version is
// deleted (may its file go?), and for every file by the consistency check. At
// the size of a real site (100,000 packs) each of these was a full table scan
// (about 400 ms a file in the start-up check, with every request waiting).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('packs_thumbnail_file_id').on('packs').column('thumbnail_file_id').execute()
  await db.schema.createIndex('pack_media_file_id').on('pack_media').column('file_id').execute()
  await db.schema.createIndex('uploads_file_id').on('uploads').column('file_id').execute()
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('uploads_file_id').execute()
  await db.schema.dropIndex('pack_media_file_id').execute()
  await db.schema.dropIndex('packs_thumbnail_file_id').execute()
}
