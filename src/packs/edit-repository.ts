// The SQL of editing a pack's page (./edit-service.ts). The caller opens the
// transaction and passes it as `db`; every function here runs inside it.
import type { Db } from '../db/index.js'
import type { UploadKind } from '../api/constants.js'
import { lowerNameChunks } from './tags-repository.js'

/** The page fields of a pack as stored, for an edit to compare against and change. */
export interface EditableState {
  title: string
  summary: string
  description: string
  categoryId: string | null
  categoryKey: string | null
  thumbnailFileId: string | null
  /** Tag ids and names, sorted by name. */
  tags: { id: string; name: string }[]
  /** Gallery file ids, in order. */
  mediaFileIds: string[]
}

/**
 * Takes the pack's row lock when the pack is still at `revision`, changing
 * nothing (revision rewritten unchanged); false when it is not (edited since)
 * or gone. The first statement of an edit's transaction: on PostgreSQL a
 * concurrent edit waits here for the first one's commit, and then re-reads the
 * row and sees the revision that commit wrote, so only one of two edits from
 * the same revision passes; SQLite runs one writing transaction at a time.
 */
export async function lockPackAtRevision(db: Db, packRowId: string, revision: number): Promise<boolean> {
  const result = await db
    .updateTable('packs')
    .set((eb) => ({ revision: eb.ref('revision') }))
    .where('id', '=', packRowId)
    .where('revision', '=', revision)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** The pack's current revision; undefined when the pack is gone. */
export async function packRevision(db: Db, packRowId: string): Promise<number | undefined> {
  const row = await db.selectFrom('packs').select('revision').where('id', '=', packRowId).executeTakeFirst()
  return row?.revision
}

export async function loadEditableState(db: Db, packRowId: string): Promise<EditableState | undefined> {
  const row = await db
    .selectFrom('packs')
    .leftJoin('categories', 'categories.id', 'packs.category_id')
    .select(['packs.title', 'packs.summary', 'packs.description', 'packs.category_id', 'packs.thumbnail_file_id', 'categories.key as category_key'])
    .where('packs.id', '=', packRowId)
    .executeTakeFirst()
  if (!row) return undefined
  const [tags, media] = await Promise.all([
    db
      .selectFrom('pack_tags')
      .innerJoin('tags', 'tags.id', 'pack_tags.tag_id')
      .select(['tags.id', 'tags.name'])
      .where('pack_tags.pack_id', '=', packRowId)
      .orderBy('tags.name_lower')
      .execute(),
    db.selectFrom('pack_media').select('file_id').where('pack_id', '=', packRowId).orderBy('position').execute(),
  ])
  return {
    title: row.title,
    summary: row.summary,
    description: row.description,
    categoryId: row.category_id,
    categoryKey: row.category_key,
    thumbnailFileId: row.thumbnail_file_id,
    tags,
    mediaFileIds: media.map((m) => m.file_id),
  }
}

export async function findCategoryByKey(db: Db, key: string): Promise<{ id: string; key: string } | undefined> {
  return db.selectFrom('categories').select(['id', 'key']).where('key', '=', key).executeTakeFirst()
}

/** The site's tags among `names` (case-insensitive), with their stored names; unknown names are left out. */
export async function findTagsNamed(db: Db, names: readonly string[]): Promise<{ id: string; name: string; nameLower: string }[]> {
  const found: { id: string; name: string; nameLower: string }[] = []
  for (const lower of lowerNameChunks(names)) {
    const rows = await db.selectFrom('tags').select(['id', 'name', 'name_lower']).where('name_lower', 'in', lower).execute()
    for (const r of rows) found.push({ id: r.id, name: r.name, nameLower: r.name_lower })
  }
  return found
}

/** A pending upload an edit may consume. */
export interface ConsumableUpload {
  id: string
  kind: UploadKind
  fileId: string
}

/** Client-sent ids per IN list: well under both engines' bound on parameters, whatever the body holds. */
const IDS_PER_QUERY = 500

/** Of `uploadIds` (lower case), the pending uploads that `userId` owns; someone else's are as absent as missing ones. */
export async function findOwnedUploads(db: Db, userId: string, uploadIds: readonly string[]): Promise<ConsumableUpload[]> {
  const ids = [...new Set(uploadIds)]
  const found: ConsumableUpload[] = []
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const rows = await db
      .selectFrom('uploads')
      .select(['id', 'kind', 'file_id'])
      .where('user_id', '=', userId)
      .where('id', 'in', ids.slice(i, i + IDS_PER_QUERY))
      .execute()
    for (const r of rows) found.push({ id: r.id, kind: r.kind as UploadKind, fileId: r.file_id })
  }
  return found
}

/** The changed columns, and the revision one past the one the edit started from. */
export async function updatePackFields(
  db: Db,
  packRowId: string,
  revision: number,
  fields: { title?: string; summary?: string; description?: string; category_id?: string | null; thumbnail_file_id?: string | null },
): Promise<boolean> {
  const result = await db
    .updateTable('packs')
    .set({ ...fields, revision: revision + 1 })
    .where('id', '=', packRowId)
    .where('revision', '=', revision)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function replacePackTags(db: Db, packRowId: string, tagIds: readonly string[]): Promise<void> {
  await db.deleteFrom('pack_tags').where('pack_id', '=', packRowId).execute()
  if (tagIds.length === 0) return
  await db.insertInto('pack_tags').values([...new Set(tagIds)].map((tagId) => ({ pack_id: packRowId, tag_id: tagId }))).execute()
}

/** The gallery becomes exactly `fileIds`, in that order. */
export async function replacePackMedia(db: Db, packRowId: string, fileIds: readonly string[]): Promise<void> {
  await db.deleteFrom('pack_media').where('pack_id', '=', packRowId).execute()
  for (let i = 0; i < fileIds.length; i += IDS_PER_QUERY) {
    const chunk = fileIds.slice(i, i + IDS_PER_QUERY)
    await db.insertInto('pack_media').values(chunk.map((fileId, j) => ({ pack_id: packRowId, file_id: fileId, position: i + j }))).execute()
  }
}
