// The SQL of managing versions and deleting packs (./versions-service.ts,
// ./delete-service.ts). The caller opens the transaction and passes it as `db`.
import type { Db } from '../db/index.js'

export interface ManagedVersion {
  id: string
  name: string
  changelog: string
  fileId: string
  yanked: boolean
}

export async function findPackVersion(db: Db, packRowId: string, versionId: string): Promise<ManagedVersion | undefined> {
  const row = await db
    .selectFrom('versions')
    .select(['id', 'name', 'changelog', 'file_id', 'yanked_at'])
    .where('pack_id', '=', packRowId)
    .where('id', '=', versionId)
    .executeTakeFirst()
  return row && { id: row.id, name: row.name, changelog: row.changelog, fileId: row.file_id, yanked: row.yanked_at !== null }
}

export async function updateVersion(db: Db, versionId: string, changes: { changelog?: string; yanked_at?: string | null }): Promise<void> {
  await db.updateTable('versions').set(changes).where('id', '=', versionId).execute()
}

export async function deleteVersionRow(db: Db, versionId: string): Promise<void> {
  await db.deleteFrom('versions').where('id', '=', versionId).execute()
}

/** Sets updated_at of a pack; run first in a transaction, it takes the pack's row lock on PostgreSQL, so changes to one pack queue up. */
export async function touchPack(db: Db, packRowId: string, now: string): Promise<boolean> {
  const result = await db.updateTable('packs').set({ updated_at: now }).where('id', '=', packRowId).executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Every file a pack refers to: its versions' archives, its gallery and its thumbnail. */
export async function packFileIds(db: Db, packRowId: string): Promise<string[]> {
  const [versions, media, pack] = await Promise.all([
    db.selectFrom('versions').select('file_id').where('pack_id', '=', packRowId).execute(),
    db.selectFrom('pack_media').select('file_id').where('pack_id', '=', packRowId).execute(),
    db.selectFrom('packs').select('thumbnail_file_id').where('id', '=', packRowId).executeTakeFirst(),
  ])
  return [
    ...versions.map((v) => v.file_id),
    ...media.map((m) => m.file_id),
    ...(pack?.thumbnail_file_id ? [pack.thumbnail_file_id] : []),
  ]
}

/** Removes the pack; its versions, tags, gallery rows and token reaches go with it (ON DELETE CASCADE). */
export async function deletePackRow(db: Db, packRowId: string): Promise<boolean> {
  const result = await db.deleteFrom('packs').where('id', '=', packRowId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** Holds namespace:pack_id until `heldUntil` (a second deletion of the same id, after a hold ran out, renews it). */
export async function holdPackId(db: Db, namespace: string, packId: string, deletedAt: string, heldUntil: string): Promise<void> {
  await db
    .insertInto('pack_id_holds')
    .values({ namespace, pack_id: packId, deleted_at: deletedAt, held_until: heldUntil })
    .onConflict((oc) => oc.columns(['namespace', 'pack_id']).doUpdateSet({ deleted_at: deletedAt, held_until: heldUntil }))
    .execute()
}

/** When the hold on namespace:pack_id ends, if one is still in force at `now`. */
export async function packIdHeldUntil(db: Db, namespace: string, packId: string, now: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('pack_id_holds')
    .select('held_until')
    .where('namespace', '=', namespace)
    .where('pack_id', '=', packId)
    .where('held_until', '>', now)
    .executeTakeFirst()
  return row?.held_until
}
