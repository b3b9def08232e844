// Profiles: a user and the packs they publish. Everyone
// past the gate sees a profile's public packs; the owner and staff also see
// the hidden ones (marked). A disabled account's profile is absent (404) to
// all but staff, as its packs are.
import { USERNAME_PATTERN } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { NotFound } from '../errors.js'
import { nowIso } from '../db/time.js'
import type { MemberRole } from '../packs/policy.js'
import { loadPackDetailsByRowIds } from '../packs/repository.js'
import { canSee, listPackPage, type PackDetail, type PackSummaryRecord, type Viewer } from '../packs/service.js'
import { countPendingFor, listMemberPackRowIds } from '../packs/team-repository.js'
import { findProfileAccount, type ProfileAccount } from './repository.js'

export type { ProfileAccount }

export interface Profile {
  account: ProfileAccount
  /** One page of their packs, most recently updated first. */
  packs: PackSummaryRecord[]
  /** Their packs this viewer sees, on all pages. */
  total: number
  page: number
  perPage: number
  /** The viewer sees hidden packs here: the owner or staff. */
  includesHidden: boolean
}

/**
 * The profile of `username` (any case) as `viewer` sees it, with page `page`
 * (from 1) of their packs. Unknown names, names no account could have, and
 * (except to staff) disabled accounts are NotFound. A page past the last has
 * no packs, like the listing's.
 */
export async function getProfile(db: Db, username: string, viewer: Viewer | null, page: number, perPage: number): Promise<Profile> {
  // A name no account can have names nothing: no query for it.
  const account = USERNAME_PATTERN.test(username) ? await findProfileAccount(db, username) : undefined
  const isStaff = viewer?.isStaff === true
  if (!account || (account.disabledAt !== null && !isStaff)) throw new NotFound(`there is no user "${shorten(username)}"`)
  const includesHidden = isStaff || viewer?.id === account.id
  const { items, total } = await listPackPage(db, { ownerId: account.id, includeHidden: includesHidden }, page, perPage, 'updated')
  return { account, packs: items, total, page, perPage, includesHidden }
}

/** A pack someone is in the team of (not as its owner), with their role there. */
export interface MemberPack {
  pack: PackDetail
  role: MemberRole
}

/**
 * The packs `account` is a member of (accepted), newest membership first, as `viewer` may see them: a hidden
 * pack only to its team and staff (canSee). Two queries for the ids, four for the packs, however many.
 */
export async function listMemberPacks(db: Db, account: Pick<ProfileAccount, 'id'>, viewer: Viewer | null): Promise<MemberPack[]> {
  const rows = await listMemberPackRowIds(db, account.id)
  const packs = new Map((await loadPackDetailsByRowIds(db, rows.map((r) => r.packRowId))).map((p) => [p.id, p]))
  return rows.flatMap(({ packRowId, role }) => {
    const pack = packs.get(packRowId)
    return pack && canSee(viewer, pack) ? [{ pack, role }] : []
  })
}

/** How many invitations and offers of ownership wait for the user's answer (the header's count): one query. */
export async function pendingCountFor(db: Db, userId: string, now = Date.now()): Promise<number> {
  return countPendingFor(db, userId, nowIso(now))
}

/** The name as it goes into a message: a hostile path segment is not echoed at length. */
function shorten(name: string): string {
  return name.length > 40 ? `${name.slice(0, 40)}…` : name
}
