// A pack's team (docs/site.md#teams): inviting, accepting or declining, changing a role, removing, leaving, and
// handing the pack to another member. What each person may do is src/packs/policy.ts's; every change is one
// transaction with its audit entry. The pack's namespace:pack_id never changes, whoever owns it: players' mods
// hold it (the namespace is where the pack was born).
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import { findUserRowByUsername } from '../accounts/users-repository.js'
import { packTarget, recordAudit } from '../audit/service.js'
import { notifyUser } from '../notifications/service.js'
import type { TokenReach } from '../auth/token-reach.js'
import type { User } from '../auth/user.js'
import type { UpdateCheckCache } from '../update-check/cache.js'
import { packChanged } from '../update-check/service.js'
import { may, type MemberRole, type PackActor } from './policy.js'
import { actorOf, packFor, refusalOf } from './service.js'
import { loadPackDetail, type PackDetail } from './repository.js'
import {
  acceptInvitation, changeOwner, deleteMember, deleteTokenPacksOf, deleteTransfer, findMember, findTransfer, insertInvitation, listPendingFor,
  putTransfer, updateMemberRole, type PendingForUser, type TransferRow,
} from './team-repository.js'
import { reindexPack } from './search-service.js'

/** How long an invitation, or an offer of ownership, waits for an answer. */
export const INVITATION_DAYS = 14
const DAY_MS = 86_400_000

export interface TeamDeps {
  db: Db
  updateCheckCache: UpdateCheckCache
  /** The app's clock (BuildOptions.clock); Date.now when absent. */
  clock?: () => number
}

/** Who acts on a team: the signed-in user and the reach of the token they came with (null: a session). */
export interface TeamActor extends User {
  reach: TokenReach | null
}

function packActor(actor: Pick<TeamActor, 'id' | 'isStaff' | 'reach'>): PackActor {
  return actorOf(actor)
}

/** The pack's open offer of ownership, for those who may see invitations (the team, staff); else null. */
export async function visibleTransfer(deps: Pick<TeamDeps, 'db' | 'clock'>, pack: PackDetail, viewer: PackActor | null): Promise<TransferRow | null> {
  if (viewer === null || !may(viewer, 'see-pending', pack)) return null
  return (await findTransfer(deps.db, pack.id, nowIso((deps.clock ?? Date.now)()))) ?? null
}

/** Invites `username` into the pack's team as `role`: it grants nothing until they accept it. */
export async function invite(deps: TeamDeps, actor: TeamActor, namespace: string, packId: string, username: string, role: MemberRole): Promise<PackDetail> {
  const now = (deps.clock ?? Date.now)()
  await deps.db.transaction().execute(async (trx) => {
    const pack = await packFor(trx, namespace, packId, packActor(actor), 'invite')
    const invitee = await findUserRowByUsername(trx, username)
    if (!invitee) throw new NotFound(`there is no account named "${username}"`)
    if (invitee.id === actor.id) throw new BadRequest('you cannot invite yourself')
    if (invitee.disabled_at !== null) throw new Conflict(`the account "${invitee.username}" is disabled by staff, so it cannot join a team`)
    if (invitee.id === pack.ownerId) throw new Conflict(`${invitee.username} owns this pack already`)
    const existing = await findMember(trx, pack.id, invitee.id, nowIso(now))
    if (existing?.accepted) throw new Conflict(`${invitee.username} is in this pack's team already (as its ${existing.role})`)
    if (existing) throw new Conflict(`${invitee.username} is invited already; withdraw that invitation to send another`)
    const sent = await insertInvitation(trx, {
      packRowId: pack.id, userId: invitee.id, role, invitedBy: actor.id, now: nowIso(now), expiresAt: nowIso(now + INVITATION_DAYS * DAY_MS),
    })
    if (!sent) throw new Conflict(`${invitee.username} is invited already; withdraw that invitation to send another`)
    await recordAudit(trx, actor, 'team.invite', packTarget(pack.namespace, pack.packId), { user: invitee.username, role })
    await notifyUser(trx, invitee.id, 'team.invited', pack.id, { namespace: pack.namespace, pack_id: pack.packId, title: pack.title, role, by: actor.username }, now)
  })
  return mustLoad(deps.db, namespace, packId)
}

/** The caller accepts their invitation to the pack's team. */
export async function acceptInvite(deps: TeamDeps, actor: TeamActor, namespace: string, packId: string): Promise<PackDetail> {
  const now = nowIso((deps.clock ?? Date.now)())
  await deps.db.transaction().execute(async (trx) => {
    const pack = await loadPackDetail(trx, namespace.toLowerCase(), packId.toLowerCase())
    if (!pack || !(await acceptInvitation(trx, pack.id, actor.id, now))) throw new NotFound('you have no invitation to this pack (it may have lapsed or been withdrawn)')
    const role = (await findMember(trx, pack.id, actor.id, now))!.role
    await recordAudit(trx, actor, 'team.accept', packTarget(pack.namespace, pack.packId), { role })
    // Search finds a pack by its team's names.
    await reindexPack(trx, pack.id)
  })
  return mustLoad(deps.db, namespace, packId)
}

/**
 * Takes `username` out of the pack's team: the caller themself (leaving, or declining an invitation), or
 * another (removing a member below them, or withdrawing an invitation). Their publish tokens stop reaching the
 * pack at once: the rows go in the same transaction, and every request checks the team again.
 */
export async function removeFromTeam(deps: TeamDeps, actor: TeamActor, namespace: string, packId: string, username: string): Promise<void> {
  const now = nowIso((deps.clock ?? Date.now)())
  await deps.db.transaction().execute(async (trx) => {
    const pack = await loadPackDetail(trx, namespace.toLowerCase(), packId.toLowerCase())
    if (!pack) throw new NotFound('pack not found')
    const self = username.toLowerCase() === actor.username.toLowerCase()
    const target = self ? { id: actor.id, username: actor.username } : await findUserRowByUsername(trx, username)
    const member = target && (await findMember(trx, pack.id, target.id, now))
    const me = packActor(actor)
    if (self) {
      if (pack.ownerId === actor.id) throw new Conflict('the owner cannot leave their pack; hand it to a member first')
      if (!member) throw new NotFound('you are not in this pack\'s team')
      if (member.accepted && !may(me, 'leave', pack)) throw refusalOf(me, pack, 'leave')
    } else {
      await packFor(trx, namespace, packId, me, 'invite')
      if (!target || !member) {
        if (target?.id === pack.ownerId) throw new Conflict(`${target.username} owns this pack; an owner is not removed from it`)
        throw new NotFound(`${username} is not in this pack's team`)
      }
      if (!may(me, 'manage-member', pack, { role: member.accepted ? member.role : null })) throw refusalOf(me, pack, 'manage-member')
    }
    await deleteMember(trx, pack.id, target!.id)
    await deleteTokenPacksOf(trx, target!.id, pack.id)
    const transfer = await findTransfer(trx, pack.id, now)
    if (transfer?.toUserId === target!.id) await deleteTransfer(trx, pack.id)
    const action = self ? (member.accepted ? 'team.leave' : 'team.decline') : (member.accepted ? 'team.remove' : 'team.withdraw')
    await recordAudit(trx, actor, action, packTarget(pack.namespace, pack.packId), { user: target!.username, role: member.role })
    await reindexPack(trx, pack.id)
  })
}

/** Changes a member's role (or an invitation's, before it is answered). */
export async function changeRole(deps: TeamDeps, actor: TeamActor, namespace: string, packId: string, username: string, role: MemberRole): Promise<PackDetail> {
  const now = nowIso((deps.clock ?? Date.now)())
  await deps.db.transaction().execute(async (trx) => {
    const me = packActor(actor)
    const pack = await packFor(trx, namespace, packId, me, 'invite')
    const target = await findUserRowByUsername(trx, username)
    if (target?.id === pack.ownerId) throw new Conflict(`${target.username} owns this pack; ownership changes hands by a transfer`)
    const member = target && (await findMember(trx, pack.id, target.id, now))
    if (!target || !member) throw new NotFound(`${username} is not in this pack's team`)
    if (!may(me, 'manage-member', pack, { role: member.accepted ? member.role : null, newRole: role })) throw refusalOf(me, pack, 'manage-member')
    if (member.role === role) return
    await updateMemberRole(trx, pack.id, target.id, role)
    await recordAudit(trx, actor, 'team.role', packTarget(pack.namespace, pack.packId), { user: target.username, from: member.role, to: role })
  })
  return mustLoad(deps.db, namespace, packId)
}

/** The owner offers the pack to one of its members; it changes hands when they accept. */
export async function offerTransfer(deps: TeamDeps, actor: TeamActor, namespace: string, packId: string, username: string): Promise<void> {
  const now = (deps.clock ?? Date.now)()
  await deps.db.transaction().execute(async (trx) => {
    const pack = await packFor(trx, namespace, packId, packActor(actor), 'transfer')
    const target = await findUserRowByUsername(trx, username)
    const member = target && (await findMember(trx, pack.id, target.id, nowIso(now)))
    if (!target || !member?.accepted) throw new Conflict(`a pack is handed only to a member of its team, and ${username} is not one (invite them first)`)
    if (target.disabled_at !== null) throw new Conflict(`the account "${target.username}" is disabled by staff, so it cannot own a pack`)
    await putTransfer(trx, { packRowId: pack.id, toUserId: target.id, offeredBy: actor.id, now: nowIso(now), expiresAt: nowIso(now + INVITATION_DAYS * DAY_MS) })
    await recordAudit(trx, actor, 'pack.transfer-offer', packTarget(pack.namespace, pack.packId), { to: target.username })
  })
}

/** The member the pack was offered to takes it: they own it now, the old owner stays as a maintainer. */
export async function acceptTransfer(deps: TeamDeps, actor: TeamActor, namespace: string, packId: string): Promise<PackDetail> {
  const now = nowIso((deps.clock ?? Date.now)())
  let key: { namespace: string; packId: string } | undefined
  await deps.db.transaction().execute(async (trx) => {
    const pack = await loadPackDetail(trx, namespace.toLowerCase(), packId.toLowerCase())
    const transfer = pack && (await findTransfer(trx, pack.id, now))
    if (!pack || transfer?.toUserId !== actor.id) throw new NotFound('this pack has not been offered to you (the offer may have lapsed or been withdrawn)')
    if (!(await findMember(trx, pack.id, actor.id, now))?.accepted) throw new Conflict('you are no longer in this pack\'s team, so it cannot be handed to you')
    const from = pack.owner
    await changeOwner(trx, pack.id, pack.ownerId, actor.id, now)
    await recordAudit(trx, actor, 'pack.transfer', packTarget(pack.namespace, pack.packId), { from, to: actor.username })
    await reindexPack(trx, pack.id)
    key = { namespace: pack.namespace, packId: pack.packId }
  })
  // Nothing the update-check says names the owner, but a cached answer must not outlive a change of hands.
  await packChanged(deps.updateCheckCache, key!.namespace, key!.packId)
  return mustLoad(deps.db, namespace, packId)
}

/** The owner withdraws the offer, or the member it was made to declines it. */
export async function cancelTransfer(deps: TeamDeps, actor: TeamActor, namespace: string, packId: string): Promise<void> {
  const now = nowIso((deps.clock ?? Date.now)())
  await deps.db.transaction().execute(async (trx) => {
    const pack = await loadPackDetail(trx, namespace.toLowerCase(), packId.toLowerCase())
    const transfer = pack && (await findTransfer(trx, pack.id, now))
    if (!pack || !transfer) throw new NotFound('this pack has no open offer of ownership')
    const declining = transfer.toUserId === actor.id
    if (!declining && !may(packActor(actor), 'transfer', pack)) throw new NotFound('this pack has no open offer of ownership')
    await deleteTransfer(trx, pack.id)
    await recordAudit(trx, actor, declining ? 'pack.transfer-decline' : 'pack.transfer-withdraw', packTarget(pack.namespace, pack.packId), {})
  })
}

/** What waits for the caller's answer: invitations and offers of ownership. */
export async function pendingFor(deps: Pick<TeamDeps, 'db' | 'clock'>, user: User): Promise<PendingForUser[]> {
  return listPendingFor(deps.db, user.id, nowIso((deps.clock ?? Date.now)()))
}

async function mustLoad(db: Db, namespace: string, packId: string): Promise<PackDetail> {
  const pack = await loadPackDetail(db, namespace.toLowerCase(), packId.toLowerCase())
  if (!pack) throw new NotFound('pack not found')
  return pack
}
