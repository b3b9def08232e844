// A pack's team: members, invitations (a member row not accepted yet) and ownership offers
// (src/db/migrations/2026_11_28_0009_pack_teams.ts). Who may change them is src/packs/policy.ts's to say.
import type { Db } from '../db/index.js'
import type { MemberRole } from './policy.js'

export interface MemberRow {
  role: MemberRole
  accepted: boolean
  expiresAt: string | null
}

/** The user's row in the pack's team, pending or accepted; a lapsed invitation (expiresAt ≤ now) counts as none. */
export async function findMember(db: Db, packRowId: string, userId: string, now: string): Promise<MemberRow | undefined> {
  const row = await db.selectFrom('pack_members').select(['role', 'accepted_at', 'expires_at'])
    .where('pack_row_id', '=', packRowId).where('user_id', '=', userId).executeTakeFirst()
  if (!row || (row.accepted_at === null && (row.expires_at === null || row.expires_at <= now))) return undefined
  return { role: row.role === 'maintainer' ? 'maintainer' : 'uploader', accepted: row.accepted_at !== null, expiresAt: row.expires_at }
}

/**
 * The user's role in the pack now, read in the caller's transaction: 'owner', an accepted member's role
 * (their account not disabled), or null. What a change re-checks after taking the pack's lock.
 */
export async function roleNow(db: Db, packRowId: string, ownerId: string, userId: string): Promise<'owner' | MemberRole | null> {
  if (userId === ownerId) return 'owner'
  const row = await db.selectFrom('pack_members').innerJoin('users', 'users.id', 'pack_members.user_id')
    .select('pack_members.role').where('pack_members.pack_row_id', '=', packRowId).where('pack_members.user_id', '=', userId)
    .where('pack_members.accepted_at', 'is not', null).where('users.disabled_at', 'is', null).executeTakeFirst()
  if (!row) return null
  return row.role === 'maintainer' ? 'maintainer' : 'uploader'
}

/**
 * A new invitation; a lapsed one of the same person is replaced. False when a live row of that person is there
 * already (an invitation sent at the same moment on another connection: the primary key decides).
 */
export async function insertInvitation(
  db: Db,
  invitation: { packRowId: string; userId: string; role: MemberRole; invitedBy: string; now: string; expiresAt: string },
): Promise<boolean> {
  await db.deleteFrom('pack_members').where('pack_row_id', '=', invitation.packRowId).where('user_id', '=', invitation.userId)
    .where('accepted_at', 'is', null).where('expires_at', '<=', invitation.now).execute()
  const result = await db.insertInto('pack_members').values({
    pack_row_id: invitation.packRowId,
    user_id: invitation.userId,
    role: invitation.role,
    invited_by: invitation.invitedBy,
    invited_at: invitation.now,
    accepted_at: null,
    expires_at: invitation.expiresAt,
  }).onConflict((oc) => oc.columns(['pack_row_id', 'user_id']).doNothing()).executeTakeFirst()
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0
}

/** Accepts the user's live invitation: true when there was one. */
export async function acceptInvitation(db: Db, packRowId: string, userId: string, now: string): Promise<boolean> {
  const result = await db.updateTable('pack_members').set({ accepted_at: now, expires_at: null })
    .where('pack_row_id', '=', packRowId).where('user_id', '=', userId)
    .where('accepted_at', 'is', null).where('expires_at', '>', now)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

export async function updateMemberRole(db: Db, packRowId: string, userId: string, role: MemberRole): Promise<void> {
  await db.updateTable('pack_members').set({ role }).where('pack_row_id', '=', packRowId).where('user_id', '=', userId).execute()
}

/** Removes the user from the team (a member, or an invitation): true when there was a row. */
export async function deleteMember(db: Db, packRowId: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('pack_members').where('pack_row_id', '=', packRowId).where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/** An invitation or ownership offer waiting for one user, with the pack it is about. */
export interface PendingForUser {
  kind: 'invitation' | 'transfer'
  namespace: string
  packId: string
  title: string
  /** The role offered; 'owner' for an ownership offer. */
  role: MemberRole | 'owner'
  invitedBy: string | null
  invitedAt: string
  expiresAt: string
}

/** What waits for the user's answer, newest first: invitations to teams and offers of ownership that have not lapsed. */
export async function listPendingFor(db: Db, userId: string, now: string): Promise<PendingForUser[]> {
  const [invitations, transfers] = await Promise.all([
    db.selectFrom('pack_members')
      .innerJoin('packs', 'packs.id', 'pack_members.pack_row_id')
      .leftJoin('users as inviter', 'inviter.id', 'pack_members.invited_by')
      .select(['packs.namespace', 'packs.pack_id', 'packs.title', 'pack_members.role', 'inviter.username as invited_by',
        'pack_members.invited_at', 'pack_members.expires_at'])
      .where('pack_members.user_id', '=', userId).where('pack_members.accepted_at', 'is', null).where('pack_members.expires_at', '>', now)
      .execute(),
    db.selectFrom('pack_transfers')
      .innerJoin('packs', 'packs.id', 'pack_transfers.pack_row_id')
      .leftJoin('users as offerer', 'offerer.id', 'pack_transfers.offered_by')
      .select(['packs.namespace', 'packs.pack_id', 'packs.title', 'offerer.username as offered_by', 'pack_transfers.offered_at',
        'pack_transfers.expires_at'])
      .where('pack_transfers.to_user_id', '=', userId).where('pack_transfers.expires_at', '>', now)
      .execute(),
  ])
  return [
    ...invitations.map((r) => ({
      kind: 'invitation' as const, namespace: r.namespace, packId: r.pack_id, title: r.title,
      role: r.role === 'maintainer' ? 'maintainer' as const : 'uploader' as const,
      invitedBy: r.invited_by, invitedAt: r.invited_at, expiresAt: r.expires_at!,
    })),
    ...transfers.map((r) => ({
      kind: 'transfer' as const, namespace: r.namespace, packId: r.pack_id, title: r.title, role: 'owner' as const,
      invitedBy: r.offered_by, invitedAt: r.offered_at, expiresAt: r.expires_at,
    })),
  ].sort((a, b) => b.invitedAt.localeCompare(a.invitedAt))
}

/** How many answers wait for the user (the header's count): invitations and offers not lapsed. */
export async function countPendingFor(db: Db, userId: string, now: string): Promise<number> {
  const row = await db.selectNoFrom((eb) => [
    eb.selectFrom('pack_members').select(eb.fn.countAll<number | string>().as('n'))
      .where('user_id', '=', userId).where('accepted_at', 'is', null).where('expires_at', '>', now).as('invitations'),
    eb.selectFrom('pack_transfers').select(eb.fn.countAll<number | string>().as('n'))
      .where('to_user_id', '=', userId).where('expires_at', '>', now).as('transfers'),
  ]).executeTakeFirstOrThrow()
  return Number(row.invitations ?? 0) + Number(row.transfers ?? 0)
}

/** A pack a user is in, with their role (profiles). Hidden packs too: the caller decides who sees them. */
export async function listMemberPackRowIds(db: Db, userId: string): Promise<Array<{ packRowId: string; role: MemberRole }>> {
  const rows = await db.selectFrom('pack_members').select(['pack_row_id', 'role'])
    .where('user_id', '=', userId).where('accepted_at', 'is not', null).orderBy('accepted_at', 'desc').execute()
  return rows.map((r) => ({ packRowId: r.pack_row_id, role: r.role === 'maintainer' ? 'maintainer' : 'uploader' }))
}

// ---------------------------------------------------------------- ownership offers

export interface TransferRow {
  toUserId: string
  toUsername: string
  expiresAt: string
}

/** The pack's open offer of ownership, if one has not lapsed. */
export async function findTransfer(db: Db, packRowId: string, now: string): Promise<TransferRow | undefined> {
  const row = await db.selectFrom('pack_transfers').innerJoin('users', 'users.id', 'pack_transfers.to_user_id')
    .select(['pack_transfers.to_user_id', 'users.username', 'pack_transfers.expires_at'])
    .where('pack_transfers.pack_row_id', '=', packRowId).where('pack_transfers.expires_at', '>', now).executeTakeFirst()
  return row && { toUserId: row.to_user_id, toUsername: row.username, expiresAt: row.expires_at }
}

/** The pack's one open offer: a new one replaces any earlier. */
export async function putTransfer(db: Db, offer: { packRowId: string; toUserId: string; offeredBy: string; now: string; expiresAt: string }): Promise<void> {
  const row = { to_user_id: offer.toUserId, offered_by: offer.offeredBy, offered_at: offer.now, expires_at: offer.expiresAt }
  // An upsert: two offers at once (another connection) end as one, the later, rather than a key violation.
  await db.insertInto('pack_transfers').values({ pack_row_id: offer.packRowId, ...row })
    .onConflict((oc) => oc.column('pack_row_id').doUpdateSet(row)).execute()
}

export async function deleteTransfer(db: Db, packRowId: string): Promise<boolean> {
  const result = await db.deleteFrom('pack_transfers').where('pack_row_id', '=', packRowId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}

/**
 * Makes `newOwnerId` the pack's owner: their member row goes, the old owner stays in the team as a maintainer
 * (as on Modrinth and Hangar: handing a pack over is not leaving it), and the offer is consumed.
 */
export async function changeOwner(db: Db, packRowId: string, oldOwnerId: string, newOwnerId: string, now: string): Promise<void> {
  await db.updateTable('packs').set({ owner_id: newOwnerId }).where('id', '=', packRowId).execute()
  await db.deleteFrom('pack_members').where('pack_row_id', '=', packRowId).where('user_id', 'in', [newOwnerId, oldOwnerId]).execute()
  await db.insertInto('pack_members').values({
    pack_row_id: packRowId, user_id: oldOwnerId, role: 'maintainer', invited_by: newOwnerId, invited_at: now, accepted_at: now, expires_at: null,
  }).execute()
  await db.deleteFrom('pack_transfers').where('pack_row_id', '=', packRowId).execute()
}

/** Lapsed invitations and offers (the sweep): they grant nothing already; this only keeps the tables small. */
export async function deleteLapsed(db: Db, now: string): Promise<number> {
  const members = await db.deleteFrom('pack_members').where('accepted_at', 'is', null).where('expires_at', '<=', now).executeTakeFirst()
  const transfers = await db.deleteFrom('pack_transfers').where('expires_at', '<=', now).executeTakeFirst()
  return Number(members.numDeletedRows) + Number(transfers.numDeletedRows)
}

/** A member's publish tokens stop naming the pack when they leave its team (or are removed from it). */
export async function deleteTokenPacksOf(db: Db, userId: string, packRowId: string): Promise<void> {
  await db.deleteFrom('token_packs').where('pack_id', '=', packRowId)
    .where('token_id', 'in', (eb) => eb.selectFrom('api_tokens').select('id').where('user_id', '=', userId))
    .execute()
}
