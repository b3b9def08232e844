// A user's feed token (docs/notifications.md#feeds): the secret their feed reader puts in the feeds' addresses,
// since readers send no headers. It opens that user's feeds and nothing else (src/auth/feed-tokens.ts). One per
// user: making a new one replaces the old, which stops working at once. Stored as its SHA-256, which feed
// requests look up, and sealed with the site secret, so the settings page can show the addresses again.
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { FEED_TOKEN_PREFIX } from '../auth/feed-tokens.js'
import { seal, unseal } from '../auth/sealed.js'
import { newSecret, sha256Hex } from '../auth/secrets.js'
import { deleteFeedToken, findFeedToken, putFeedToken, type FeedTokenRow } from './feed-token-repository.js'

export interface FeedTokenRecord {
  /** null when the sealed copy cannot be opened (sealed under another site secret): it still works, but only a reset shows one again. */
  token: string | null
  createdAt: string
  lastUsedAt: string | null
}

function toRecord(siteSecret: string, row: FeedTokenRow): FeedTokenRecord {
  let token: string | null
  try {
    token = unseal(siteSecret, 'feed-token', row.sealed)
  } catch {
    token = null
  }
  // A sealed copy that opens to another token than the hash names would show an address that does not work.
  if (token !== null && sha256Hex(token) !== row.token_hash) token = null
  return { token, createdAt: row.created_at, lastUsedAt: row.last_used_at }
}

/** The user's feed token, or undefined when they have none. */
export async function readFeedToken(db: Db, siteSecret: string, userId: string): Promise<FeedTokenRecord | undefined> {
  const row = await findFeedToken(db, userId)
  return row && toRecord(siteSecret, row)
}

/** A new feed token for the user, replacing theirs if they had one. */
export async function resetFeedToken(db: Db, siteSecret: string, userId: string, now: number = Date.now()): Promise<FeedTokenRecord> {
  const token = newSecret(FEED_TOKEN_PREFIX)
  const row = await putFeedToken(db, {
    user_id: userId, token_hash: sha256Hex(token), sealed: seal(siteSecret, 'feed-token', token), created_at: nowIso(now),
  })
  return { token, createdAt: row.created_at, lastUsedAt: null }
}

/** Revokes the user's feed token, if any: its addresses stop working at once. Whether there was one. */
export async function revokeFeedToken(db: Db, userId: string): Promise<boolean> {
  return deleteFeedToken(db, userId)
}
