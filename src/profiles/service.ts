// Profiles: a user and the packs they publish. Everyone
// past the gate sees a profile's public packs; the owner and staff also see
// the hidden ones (marked). A disabled account's profile is absent (404) to
// all but staff, as its packs are.
import { USERNAME_PATTERN } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { NotFound } from '../errors.js'
import { listPackPage, type PackSummaryRecord, type Viewer } from '../packs/service.js'
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

/** The name as it goes into a message: a hostile path segment is not echoed at length. */
function shorten(name: string): string {
  return name.length > 40 ? `${name.slice(0, 40)}…` : name
}
