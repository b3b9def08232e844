// API tokens and browser sessions: both are random secrets stored as SHA-256
// and looked up by that hash, joined to their user.
import { randomUUID } from 'node:crypto'
import type { Db } from '../db/index.js'
import type { Insertable, Selectable } from 'kysely'
import type { ApiTokensTable } from '../db/schema.js'
import { nowIso } from '../db/time.js'
import type { TokenScope } from '../api/constants.js'
import { FULL_REACH, storedScope, type ReachPack, type TokenReach } from './token-reach.js'
import { rowToUser, type User } from './user.js'

/** A new token row with its scope (a publish token's packs go in token_packs, in the caller's transaction). */
export async function insertApiToken(
  db: Db,
  token: { userId: string; name: string; tokenHash: string; expiresAt: string | null; scope: TokenScope },
): Promise<Selectable<ApiTokensTable>> {
  const row = {
    id: randomUUID(),
    user_id: token.userId,
    name: token.name,
    token_hash: token.tokenHash,
    created_at: nowIso(),
    last_used_at: null,
    expires_at: token.expiresAt,
    revoked_at: null,
    scope: token.scope,
  } satisfies Insertable<ApiTokensTable>
  await db.insertInto('api_tokens').values(row).execute()
  return row
}

export interface TokenOwner {
  tokenId: string
  lastUsedAt: string | null
  user: User
  usernameLower: string
  /**
   * Staff disabled the account: the token must not work, but its holder is told why
   * (a 401 that names the reason, not "invalid token"). Every caller checks it.
   */
  disabled: boolean
  /** What the token may do (src/auth/token-reach.ts), with its packs' current names. */
  reach: TokenReach
}

/**
 * The live (not revoked, not expired) token with this hash, and its user. A
 * disabled account's token is returned with `disabled` set, for the caller to
 * refuse with its own message: one query either way, by the hash.
 */
export async function findLiveTokenByHash(db: Db, tokenHash: string, now: string): Promise<TokenOwner | undefined> {
  // The reach comes in the same round trip: a full or read token has no
  // token_packs rows and stays one row (the left joins cost an index probe);
  // a publish token gives one row per pack it names (at most TOKEN_MAX_PACKS).
  const rows = await db
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .leftJoin('token_packs', 'token_packs.token_id', 'api_tokens.id')
    .leftJoin('packs', 'packs.id', 'token_packs.pack_id')
    .select([
      'api_tokens.id as token_id', 'api_tokens.last_used_at', 'api_tokens.scope', 'users.id', 'users.username', 'users.username_lower',
      'users.is_staff', 'users.disabled_at', 'packs.id as pack_row_id', 'packs.namespace as pack_namespace', 'packs.pack_id as pack_pack_id',
    ])
    .where('api_tokens.token_hash', '=', tokenHash)
    .where('api_tokens.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('api_tokens.expires_at', 'is', null), eb('api_tokens.expires_at', '>', now)]))
    .orderBy('packs.namespace')
    .orderBy('packs.pack_id')
    .execute()
  const row = rows[0]
  if (!row) return undefined
  const scope = storedScope(row.scope)
  const packs: ReachPack[] = scope !== 'publish' ? [] : rows.flatMap((r) =>
    r.pack_row_id !== null && r.pack_namespace !== null && r.pack_pack_id !== null
      ? [{ id: r.pack_row_id, namespace: r.pack_namespace, packId: r.pack_pack_id }]
      : [])
  return {
    tokenId: row.token_id, lastUsedAt: row.last_used_at, user: rowToUser(row), usernameLower: row.username_lower, disabled: row.disabled_at !== null,
    reach: scope === 'full' ? FULL_REACH : { scope, packs },
  }
}

export async function touchApiToken(db: Db, tokenId: string, now: string): Promise<void> {
  await db.updateTable('api_tokens').set({ last_used_at: now }).where('id', '=', tokenId).execute()
}

export async function insertSession(db: Db, userId: string, tokenHash: string, expiresAt: string): Promise<void> {
  await db
    .insertInto('sessions')
    .values({ id: randomUUID(), user_id: userId, token_hash: tokenHash, created_at: nowIso(), expires_at: expiresAt })
    .execute()
}

export async function findLiveSessionUser(db: Db, tokenHash: string, now: string): Promise<User | undefined> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select(['users.id', 'users.username', 'users.is_staff'])
    .where('sessions.token_hash', '=', tokenHash)
    .where('sessions.expires_at', '>', now)
    .where('users.disabled_at', 'is', null)
    .executeTakeFirst()
  return row ? rowToUser(row) : undefined
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('token_hash', '=', tokenHash).execute()
}

export async function deleteExpiredSessions(db: Db, now: string): Promise<number> {
  const result = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst()
  return Number(result.numDeletedRows)
}

export async function getSetting(db: Db, key: string): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst()
  return row?.value
}

export async function putSetting(db: Db, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
    .execute()
}

/** Inserts the setting only if absent and returns whichever value is stored (safe when instances race). */
export async function getOrCreateSetting(db: Db, key: string, create: () => string): Promise<string> {
  await db.insertInto('settings').values({ key, value: create() }).onConflict((oc) => oc.column('key').doNothing()).execute()
  return (await getSetting(db, key))!
}

/** What the owner of a token may see of it: never the hash. */
export type ApiTokenRecord = Pick<Selectable<ApiTokensTable>, 'id' | 'name' | 'created_at' | 'last_used_at' | 'expires_at' | 'scope'>

/** The user's tokens that are not revoked (expired ones included), newest first. */
export async function listUserApiTokens(db: Db, userId: string): Promise<ApiTokenRecord[]> {
  return db
    .selectFrom('api_tokens')
    .select(['id', 'name', 'created_at', 'last_used_at', 'expires_at', 'scope'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute()
}

/**
 * Revokes the user's token: ownership is part of the WHERE clause, so someone
 * else's token is exactly as absent as a missing one. false when nothing matched.
 */
export async function revokeUserApiToken(db: Db, userId: string, tokenId: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('api_tokens')
    .set({ revoked_at: now })
    .where('id', '=', tokenId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/** Ends the user's sessions, except the one whose hash is `keepSessionHash` (null: all of them). Returns how many ended. */
export async function deleteUserSessions(db: Db, userId: string, keepSessionHash: string | null): Promise<number> {
  let query = db.deleteFrom('sessions').where('user_id', '=', userId)
  if (keepSessionHash !== null) query = query.where('token_hash', '!=', keepSessionHash)
  const result = await query.executeTakeFirst()
  return Number(result.numDeletedRows)
}

/** A feed token's row and its user, found by the token's hash (./feed-tokens.ts). */
export interface FeedTokenOwner {
  tokenHash: string
  lastUsedAt: string | null
  user: User
  /** Staff disabled the account: the token must not work, and its holder is told why. */
  disabled: boolean
}

export async function findFeedTokenOwner(db: Db, tokenHash: string): Promise<FeedTokenOwner | undefined> {
  const row = await db
    .selectFrom('feed_tokens')
    .innerJoin('users', 'users.id', 'feed_tokens.user_id')
    .select(['feed_tokens.token_hash', 'feed_tokens.last_used_at', 'users.id', 'users.username', 'users.is_staff', 'users.disabled_at'])
    .where('feed_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst()
  return row && { tokenHash: row.token_hash, lastUsedAt: row.last_used_at, user: rowToUser(row), disabled: row.disabled_at !== null }
}

/** Notes a use of the feed token; matched by its hash too, so a token replaced meanwhile is not touched in its successor's name. */
export async function touchFeedToken(db: Db, userId: string, tokenHash: string, now: string): Promise<void> {
  await db.updateTable('feed_tokens').set({ last_used_at: now }).where('user_id', '=', userId).where('token_hash', '=', tokenHash).execute()
}
