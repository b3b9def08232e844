// Deleting a pack: the pack, its versions, gallery,
// thumbnail and their files go, and its namespace:pack_id is held for
// PACK_ID_HOLD_DAYS so no other pack can take it: a player's mod must never
// silently receive a different pack under a name it trusts.
import { PACK_ID_HOLD_DAYS } from '../api/constants.js'
import { nowIso } from '../db/time.js'
import { NotFound } from '../errors.js'
import { packTarget, recordAudit, type Actor } from '../audit/service.js'
import { deleteFileRows, filesNotInUse } from '../files/repository.js'
import { deleteStoredFiles } from '../storage/delete.js'
import { packChanged } from '../update-check/service.js'
import { actorOf, packFor, type PackChanger, type PacksDeps } from './service.js'
import { releaseClaims } from './archive-claims.js'
import { deletePackRow, holdPackId, packFileIds } from './versions-repository.js'
import { unindexPack } from './search-service.js'

const DAY_MS = 86_400_000

/** Deletes the pack (its owner or staff: src/packs/policy.ts) and returns when its id is free again. */
export async function deletePack(deps: PacksDeps, actor: PackChanger, namespace: string, packId: string): Promise<{ heldUntil: string }> {
  const pack = await packFor(deps.db, namespace, packId, actorOf(actor), 'delete')
  const now = (deps.clock ?? Date.now)()
  const heldUntil = nowIso(now + PACK_ID_HOLD_DAYS * DAY_MS)
  const storageKeys = await deps.db.transaction().execute(async (trx) => {
    const fileIds = await packFileIds(trx, pack.id)
    // Its words leave the search's vocabulary (the index rows would go with the pack, their counts would not).
    await unindexPack(trx, pack.id)
    if (!(await deletePackRow(trx, pack.id))) throw new NotFound('pack not found')
    const unused = await filesNotInUse(trx, fileIds)
    await deleteFileRows(trx, unused.map((f) => f.id))
    await holdPackId(trx, pack.namespace, pack.packId, nowIso(now), heldUntil)
    // Its archives stay the deleted pack's owner's for as long as its id is held.
    await releaseClaims(trx, pack.id, now)
    await recordAudit(trx, actor, 'pack.delete', packTarget(pack.namespace, pack.packId), {
      title: pack.title, owner: pack.owner, versions: pack.versions.length,
    })
    return unused.map((f) => f.storage_key)
  })
  await deleteStoredFiles(deps.store, storageKeys)
  await packChanged(deps.updateCheckCache, pack.namespace, pack.packId)
  return { heldUntil }
}
