// Feed tokens as credentials: the `?feed_token=` a feed reader's request carries (readers send no headers),
// recognised by its hash. It opens that user's feeds and nothing else: src/auth/plugin.ts reads it only on
// routes marked `config.feedToken` (the feeds, src/feeds/routes.ts). Making, showing and revoking one is the
// accounts' (src/accounts/feed-token-service.ts).
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { findFeedTokenOwner, touchFeedToken } from './credentials-repository.js'
import { safeEqual, sha256Hex } from './secrets.js'
import type { User } from './user.js'

/** Readable, like `packs_` on API tokens, so a leaked feed address is easy to spot and scan for. */
export const FEED_TOKEN_PREFIX = 'pkf_'
/** What newSecret makes: the prefix and 32 random bytes in base64url. Anything else is not worth a query. */
const FEED_TOKEN_SHAPE = /^pkf_[A-Za-z0-9_-]{43}$/
/** last_used_at is a hint for the owner, not an audit log: a reader polling every minute must not write every time. */
const TOUCH_INTERVAL_MS = 60_000

export function isFeedTokenShaped(value: string): boolean {
  return FEED_TOKEN_SHAPE.test(value)
}

/**
 * The user a feed token belongs to, 'disabled' when staff have disabled that account (its holder is told,
 * as with API tokens), or undefined when it is no live feed token. Found by its SHA-256 (an indexed equality
 * on a digest, which leaks nothing useful through timing), and the stored digest is compared again in
 * constant time.
 */
export async function authenticateFeedToken(db: Db, token: string, now: number = Date.now()): Promise<User | 'disabled' | undefined> {
  if (!isFeedTokenShaped(token)) return undefined
  const hash = sha256Hex(token)
  const owner = await findFeedTokenOwner(db, hash)
  if (!owner || !safeEqual(owner.tokenHash, hash)) return undefined
  if (owner.disabled) return 'disabled'
  if (!owner.lastUsedAt || now - Date.parse(owner.lastUsedAt) > TOUCH_INTERVAL_MS) {
    await touchFeedToken(db, owner.user.id, hash, nowIso(now))
  }
  return owner.user
}
