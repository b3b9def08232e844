// The SQL of moderation (src/moderation/pack-service.ts): a pack's hidden
// mark, and the packs of one account (whose update-check answers change when
// staff disable or enable it).
import type { Db } from '../db/index.js'

/** The pack's row id and hidden mark; keys in lower case. */
export async function findPackHiddenAt(db: Db, namespace: string, packId: string): Promise<{ id: string; hiddenAt: string | null } | undefined> {
  const row = await db
    .selectFrom('packs')
    .select(['id', 'hidden_at'])
    .where('namespace', '=', namespace)
    .where('pack_id', '=', packId)
    .executeTakeFirst()
  return row && { id: row.id, hiddenAt: row.hidden_at }
}

/**
 * Sets (a time) or clears (null) the pack's hidden mark; false when it was
 * already so. The condition is in the UPDATE, so of two staff members doing
 * the same at once exactly one changes it (and one audit entry is written).
 */
export async function updatePackHiddenAt(db: Db, packRowId: string, hiddenAt: string | null): Promise<boolean> {
  const result = await db
    .updateTable('packs')
    .set({ hidden_at: hiddenAt })
    .where('id', '=', packRowId)
    .where('hidden_at', hiddenAt === null ? 'is not' : 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** namespace and pack_id of every pack the user owns. */
export async function listOwnedPackKeys(db: Db, ownerId: string): Promise<{ namespace: string; packId: string }[]> {
  const rows = await db.selectFrom('packs').select(['namespace', 'pack_id']).where('owner_id', '=', ownerId).orderBy('id').execute()
  return rows.map((row) => ({ namespace: row.namespace, packId: row.pack_id }))
}
