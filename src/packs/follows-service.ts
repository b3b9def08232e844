// Following packs (docs/notifications.md#following-packs): a signed-in user follows a pack to hear of its new
// versions in their notifications. Following and unfollowing are idempotent: asking again changes nothing and
// answers the same. A pack the caller may not see (canSee) is not found, here as everywhere, so a follow
// tells nobody that a hidden pack exists; a followed pack that is hidden later drops out of their list until it
// is shown again.
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import type { User } from '../auth/user.js'
import type { FollowBody } from '../api/notifications.js'
import { getPack, type PackDetail } from './service.js'
import {
  addToFollowers, deleteFollow, followerCount, insertFollow, isFollowing, listFollowedPacks, type FollowedPackRow,
} from './follows-repository.js'

export type { FollowedPackRow }

export interface FollowsDeps {
  db: Db
  /** The app's clock (BuildOptions.clock): when a follow began. Date.now when absent. */
  clock?: () => number
}

/** The caller follows the pack (already following: nothing changes). */
export async function followPack(deps: FollowsDeps, user: User, namespace: string, packId: string): Promise<FollowBody> {
  const now = nowIso((deps.clock ?? Date.now)())
  return deps.db.transaction().execute(async (trx) => {
    const pack = await getPack(trx, namespace, packId, user)
    // The count moves only with a row that was really added: a second follow, or one racing it, adds nothing.
    const followers = (await insertFollow(trx, pack.id, user.id, now)) ? await addToFollowers(trx, pack.id, 1) : await followerCount(trx, pack.id)
    return { following: true, followers }
  })
}

/** The caller stops following the pack (not following: nothing changes). */
export async function unfollowPack(deps: FollowsDeps, user: User, namespace: string, packId: string): Promise<FollowBody> {
  return deps.db.transaction().execute(async (trx) => {
    const pack = await getPack(trx, namespace, packId, user)
    const followers = (await deleteFollow(trx, pack.id, user.id)) ? await addToFollowers(trx, pack.id, -1) : await followerCount(trx, pack.id)
    return { following: false, followers }
  })
}

/** Whether `user` follows the pack (for its page's button); false for nobody signed in. */
export async function followsPack(db: Db, user: User | null | undefined, pack: Pick<PackDetail, 'id'>): Promise<boolean> {
  return user ? isFollowing(db, pack.id, user.id) : false
}

/** A page of the packs `user` follows and may see, newest follow first, and how many there are in all. */
export function followedPacks(db: Db, user: User, query: { limit: number; offset: number }): Promise<{ items: FollowedPackRow[]; total: number }> {
  return listFollowedPacks(db, { id: user.id, isStaff: user.isStaff }, query.limit, query.offset)
}
