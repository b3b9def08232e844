// Staff hide and unhide packs. A hidden pack is seen only
// by its owner and staff (canSee): the listing, the API, its page and the
// update-check leave it out; nothing is deleted, so unhiding restores it as
// it was. The change and its audit entry are one transaction; the
// update-check's cached answers are dropped on every instance after the commit.
import { nowIso } from '../db/time.js'
import { Forbidden, NotFound } from '../errors.js'
import { packTarget, reasonDetails, recordAudit, type Actor } from '../audit/service.js'
import { recordPackEvent } from '../events/record.js'
import { packChanged } from '../update-check/service.js'
import { findPackHiddenAt, updatePackHiddenAt } from './pack-repository.js'
import { getPack, type PackDetail, type PacksDeps } from '../packs/service.js'
import { forgetFacetCounts } from '../packs/search-service.js'

/**
 * Hides (`hidden` true) or unhides the pack, as staff or the admin CLI, and
 * returns it as staff see it. Asking for the state the pack is already in
 * changes nothing and records nothing. `reason` goes into the audit log.
 */
export async function setPackHidden(
  deps: Pick<PacksDeps, 'db' | 'updateCheckCache'>,
  actor: Actor,
  namespace: string,
  packId: string,
  hidden: boolean,
  reason?: string,
): Promise<PackDetail> {
  if (!actor.isStaff) throw new Forbidden('only staff may hide or unhide packs')
  const ns = namespace.toLowerCase()
  const id = packId.toLowerCase()
  const why = reasonDetails(reason)
  const changed = await deps.db.transaction().execute(async (trx) => {
    const pack = await findPackHiddenAt(trx, ns, id)
    if (!pack) throw new NotFound('pack not found')
    if (!(await updatePackHiddenAt(trx, pack.id, hidden ? nowIso() : null))) return false
    await recordAudit(trx, actor, hidden ? 'pack.hide' : 'pack.unhide', packTarget(ns, id), why)
    await recordPackEvent(trx, { type: hidden ? 'pack.hidden' : 'pack.shown', packRowId: pack.id, actor, ...(typeof why.reason === 'string' ? { reason: why.reason } : {}) })
    return true
  })
  // After the commit, and awaited: with REDIS_URL every instance answers the update-check anew from here on.
  if (changed) await packChanged(deps.updateCheckCache, ns, id)
  // A hidden pack leaves search's counts.
  if (changed) forgetFacetCounts()
  return getPack(deps.db, ns, id, actor)
}
