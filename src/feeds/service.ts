// The Atom feeds (docs/notifications.md#feeds): a pack's versions, the versions of a user's packs, and new packs
// on the site, newest first, at most FEED_ENTRIES each. Each shows only what its viewer may see, as the pages
// do: a hidden pack (hidden by staff, or of a disabled account) only to its owner and staff, and on its own
// feed also to its team (src/packs/policy.ts); yanked versions never.
import { USERNAME_PATTERN } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { NotFound } from '../errors.js'
import { feedUrl, packFeedPath } from '../http/feed-urls.js'
import { readFeedToken } from '../accounts/feed-token-service.js'
import type { User } from '../auth/user.js'
import { teamsOf } from '../packs/repository.js'
import { canSee, type Viewer } from '../packs/service.js'
import {
  findFeedPack, findFeedUser, listNewListedPacks, listNewUnlistedPacks, listOwnerVersions, listPackVersions,
  type FeedPack, type FeedUser, type FeedVersion,
} from './repository.js'

export type { FeedPack, FeedUser, FeedVersion }

/** Entries a feed holds at most: readers poll often, and what is older they have seen. */
export const FEED_ENTRIES = 50

/** A namespace or pack id as stored (lower case): anything else names no pack, and costs no query. */
const PACK_NAME = /^[a-z0-9_.-]{1,64}$/

export interface PackFeed {
  pack: FeedPack
  versions: FeedVersion[]
}

export interface UserFeed {
  user: FeedUser
  entries: Array<{ pack: FeedPack; version: FeedVersion }>
}

/** Whether `viewer` is the owner or staff: who sees packs the listing leaves out. */
const seesUnlisted = (viewer: Viewer | null, ownerId: string) => viewer !== null && (viewer.isStaff || viewer.id === ownerId)

/** The pack (names in any case) and its newest versions that are not yanked; NotFound when `viewer` may not see it, as on its page. */
export async function packFeed(db: Db, namespace: string, packId: string, viewer: Viewer | null): Promise<PackFeed> {
  const ns = namespace.toLowerCase()
  const id = packId.toLowerCase()
  const pack = PACK_NAME.test(ns) && PACK_NAME.test(id) ? await findFeedPack(db, ns, id) : undefined
  if (!pack || !(await maySeePack(db, pack, viewer))) throw new NotFound('pack not found')
  return { pack, versions: await listPackVersions(db, pack.id, FEED_ENTRIES) }
}

async function maySeePack(db: Db, pack: FeedPack, viewer: Viewer | null): Promise<boolean> {
  if ((!pack.hidden && !pack.ownerDisabled) || seesUnlisted(viewer, pack.ownerId)) return true
  if (viewer === null) return false
  // Its team sees a hidden pack too; only then is the team worth a query.
  const team = (await teamsOf(db, [pack.id])).get(pack.id) ?? []
  return canSee(viewer, { ...pack, team })
}

/**
 * The newest versions of the packs `username` (any case) owns. Their hidden packs only to them and staff; a
 * disabled account's feed, like its profile, is NotFound except to staff.
 */
export async function userFeed(db: Db, username: string, viewer: Viewer | null): Promise<UserFeed> {
  const user = USERNAME_PATTERN.test(username) ? await findFeedUser(db, username.toLowerCase()) : undefined
  if (!user || (user.disabled && viewer?.isStaff !== true)) throw new NotFound(`there is no user "${username.length > 40 ? `${username.slice(0, 40)}…` : username}"`)
  return { user, entries: await listOwnerVersions(db, user.id, seesUnlisted(viewer, user.id), FEED_ENTRIES) }
}

/**
 * The newest packs on the site: the listed ones, and for staff every unlisted one, for a signed-in user their
 * own. The two are read apart, each from its index, and merged.
 */
export async function newPacksFeed(db: Db, viewer: Viewer | null): Promise<FeedPack[]> {
  const [listed, unlisted] = await Promise.all([
    listNewListedPacks(db, FEED_ENTRIES),
    viewer?.isStaff ? listNewUnlistedPacks(db, null, FEED_ENTRIES)
      : viewer?.id ? listNewUnlistedPacks(db, viewer.id, FEED_ENTRIES)
        : [],
  ])
  return [...listed, ...unlisted].sort(newestFirst).slice(0, FEED_ENTRIES)
}

function newestFirst(a: FeedPack, b: FeedPack): number {
  if (a.createdAt !== b.createdAt) return a.createdAt > b.createdAt ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/**
 * The address of a pack's feed for `viewer`, absolute from `origin`: for a pack page's
 * `<link rel="alternate" type="application/atom+xml">`. It carries the viewer's feed token when they have one,
 * as the page's reader will not have the browser's session; without one, it opens only past the gate in a
 * browser. Names as stored (lower case), as the pack's record has them.
 */
export async function packFeedUrlFor(
  db: Db, siteSecret: string, origin: string, pack: { namespace: string; packId: string }, viewer: Pick<User, 'id'> | null,
): Promise<string> {
  const token = viewer === null ? null : (await readFeedToken(db, siteSecret, viewer.id))?.token ?? null
  return feedUrl(origin, packFeedPath(pack.namespace, pack.packId), token)
}
