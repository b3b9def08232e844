// Whether a signed file link may still open its file: the file belongs to a
// pack everyone may see (not hidden by staff, owner not disabled). One query,
// each branch going by an index on the file's id (versions_file_id,
// packs_thumbnail_file_id, pack_media_file_id) and then the pack's primary key.
import type { Db } from '../db/index.js'

/** True when `fileId` (as stored: lower case) is a version archive, thumbnail or gallery item of a listed pack. */
export async function fileOfListedPack(db: Db, fileId: string): Promise<boolean> {
  const row = await db
    .selectFrom('versions')
    .innerJoin('packs', 'packs.id', 'versions.pack_id')
    .select('packs.id')
    .where('versions.file_id', '=', fileId)
    .where('packs.hidden_at', 'is', null)
    .where('packs.owner_disabled', '=', 0)
    .unionAll((db) => db
      .selectFrom('packs')
      .select('packs.id')
      .where('packs.thumbnail_file_id', '=', fileId)
      .where('packs.hidden_at', 'is', null)
      .where('packs.owner_disabled', '=', 0))
    .unionAll((db) => db
      .selectFrom('pack_media')
      .innerJoin('packs', 'packs.id', 'pack_media.pack_id')
      .select('packs.id')
      .where('pack_media.file_id', '=', fileId)
      .where('packs.hidden_at', 'is', null)
      .where('packs.owner_disabled', '=', 0))
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}
