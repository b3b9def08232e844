// The SQL of feed tokens as their owner manages them (./feed-token-service.ts): one row per user, replaced
// whole. Recognising a token on a feed request is the auth layer's (src/auth/credentials-repository.ts).
import type { Selectable } from 'kysely'
import type { Db } from '../db/index.js'
import type { FeedTokensTable } from '../db/schema.js'

export type FeedTokenRow = Selectable<FeedTokensTable>

export async function findFeedToken(db: Db, userId: string): Promise<FeedTokenRow | undefined> {
  return db.selectFrom('feed_tokens').selectAll().where('user_id', '=', userId).executeTakeFirst()
}

/** The user's one feed token, replacing any earlier one in the same statement: the old hash stops matching at once. */
export async function putFeedToken(db: Db, row: Omit<FeedTokenRow, 'last_used_at'>): Promise<FeedTokenRow> {
  const stored: FeedTokenRow = { ...row, last_used_at: null }
  await db
    .insertInto('feed_tokens')
    .values(stored)
    .onConflict((oc) => oc.column('user_id').doUpdateSet({
      token_hash: stored.token_hash, sealed: stored.sealed, created_at: stored.created_at, last_used_at: null,
    }))
    .execute()
  return stored
}

/** Whether the user had a feed token to delete. */
export async function deleteFeedToken(db: Db, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('feed_tokens').where('user_id', '=', userId).executeTakeFirst()
  return Number(result.numDeletedRows) > 0
}
