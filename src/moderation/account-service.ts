// Staff disable and enable accounts. A disabled account
// cannot sign in, its sessions end at once (they are deleted), its API tokens
// stop working at once (every lookup leaves a disabled account's tokens out,
// src/auth/credentials-repository.ts) and its packs are hidden from
// everyone but staff (canSee; the update-check answers 404 for them).
//
// Enabling is the way back: the packs are visible again and the tokens work
// again. Tokens are kept, not revoked, as Modrinth's suspensions do: a
// mistaken or temporary suspension must not break the owner's CI, and a
// token stolen with the account can still be revoked by its owner afterwards
// (or the account stay disabled). Sessions are not kept: signing in again is
// cheap, and a session cookie is the credential most likely to have leaked.
import { nowIso } from '../db/time.js'
import { BadRequest, Forbidden, NotFound } from '../errors.js'
import { reasonDetails, recordAudit, userTarget, type Actor } from '../audit/service.js'
import type { Db } from '../db/index.js'
import { listOwnedPackKeys } from './pack-repository.js'
import type { UpdateCheckCache } from '../update-check/cache.js'
import { packChanged } from '../update-check/service.js'
import { deleteUserSessions } from '../auth/credentials-repository.js'
import { findAccountState, updateDisabledAt, type AccountState } from './account-repository.js'
import { forgetFacetCounts } from '../packs/search-service.js'

export type { AccountState }

export interface ModerationDeps {
  db: Db
  updateCheckCache: UpdateCheckCache
}

/**
 * Disables (`disabled` true) or enables the named account, as staff or the
 * admin CLI, and returns its new state. Staff cannot disable themselves (an
 * accident that only another staff member or the CLI could undo). Asking for
 * the state the account is already in changes nothing and records nothing.
 */
export async function setUserDisabled(
  deps: ModerationDeps,
  actor: Actor,
  username: string,
  disabled: boolean,
  reason?: string,
): Promise<AccountState> {
  if (!actor.isStaff) throw new Forbidden('only staff may disable or enable accounts')
  const why = reasonDetails(reason)
  const result = await deps.db.transaction().execute(async (trx) => {
    const account = await findAccountState(trx, username)
    if (!account) throw new NotFound(`no user "${username}"`)
    if (disabled && actor.id !== null && actor.id === account.id) throw new BadRequest('you cannot disable your own account')
    const disabledAt = disabled ? nowIso() : null
    // Already so (perhaps by a request that raced this one): nothing to record, the state asked for is the state.
    if (!(await updateDisabledAt(trx, account.id, disabledAt))) return { account: { ...account, disabledAt: disabled ? account.disabledAt ?? disabledAt : null }, packs: [] }
    const sessionsEnded = disabled ? await deleteUserSessions(trx, account.id, null) : 0
    await recordAudit(trx, actor, disabled ? 'user.disable' : 'user.enable', userTarget(account.username),
      disabled ? { ...why, sessions_ended: sessionsEnded } : why)
    return { account: { ...account, disabledAt }, packs: await listOwnedPackKeys(trx, account.id) }
  })
  // After the commit, and awaited: every instance's update-check answers 404 for these packs (or offers them
  // again) from here on. One at a time: a large account costs time here, not a burst on Redis.
  for (const pack of result.packs) await packChanged(deps.updateCheckCache, pack.namespace, pack.packId)
  // A disabled owner's packs leave search's counts (and come back with the account).
  if (result.packs.length > 0) forgetFacetCounts()
  return result.account
}
