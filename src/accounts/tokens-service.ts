// API tokens: issued by the admin CLI or by their owner on the settings page,
// shown once, stored as a SHA-256 and looked up by it (CONTRACT §1, §3).
import { TOKEN_MAX_DAYS, TOKEN_NAME_MAX, UUID_PATTERN, type TokenScope } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { BadRequest, NotFound } from '../errors.js'
import {
  findLiveTokenByHash, insertApiToken, listUserApiTokens, revokeUserApiToken, touchApiToken, type ApiTokenRecord,
} from './credentials-repository.js'
import { newSecret, sha256Hex } from './secrets.js'
import { requireUser } from './users-service.js'
import type { User } from './users-repository.js'

const API_TOKEN_PREFIX = 'packs_'
/** last_used_at is a hint for the owner, not an audit log: write it at most once a minute per token. */
const TOKEN_TOUCH_INTERVAL_MS = 60_000

/** A token for the named user (the admin CLI, and tests). The raw token is returned this once. */
export async function createApiToken(
  db: Db,
  username: string,
  name: string,
  expiresAt: Date | null = null,
): Promise<{ token: string; id: string }> {
  const user = await requireUser(db, username)
  const { token, record } = await insertNewToken(db, user.id, name, expiresAt)
  return { token, id: record.id }
}

async function insertNewToken(db: Db, userId: string, name: string, expiresAt: Date | null): Promise<{ token: string; record: ApiTokenRecord }> {
  const token = newSecret(API_TOKEN_PREFIX)
  const row = await insertApiToken(db, {
    userId,
    name,
    tokenHash: sha256Hex(token),
    expiresAt: expiresAt ? expiresAt.toISOString() : null,
  })
  return { token, record: { id: row.id, name: row.name, created_at: row.created_at, last_used_at: row.last_used_at, expires_at: row.expires_at } }
}

/**
 * A token the user asked for on the settings page (or its API): the name is
 * trimmed and must keep 1-64 characters; `expiresInDays` null means it never
 * expires. The raw token is returned this once; only its hash is stored.
 */
export async function issueApiToken(
  db: Db,
  userId: string,
  name: string,
  expiresInDays: number | null,
  now: number = Date.now(),
): Promise<{ token: string; record: ApiTokenRecord }> {
  const trimmed = name.trim()
  if (trimmed.length === 0) throw new BadRequest('name must not be empty')
  if (trimmed.length > TOKEN_NAME_MAX) throw new BadRequest(`name must be at most ${TOKEN_NAME_MAX} characters`)
  // Control characters (a pasted tab or newline) would only confuse the list.
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw new BadRequest('name must not contain control characters')
  if (expiresInDays !== null && (!Number.isInteger(expiresInDays) || expiresInDays < 1 || expiresInDays > TOKEN_MAX_DAYS)) {
    throw new BadRequest(`expires_in_days must be a whole number of days from 1 to ${TOKEN_MAX_DAYS}, or null for a token that never expires`)
  }
  const expiresAt = expiresInDays === null ? null : new Date(now + expiresInDays * 86_400_000)
  return insertNewToken(db, userId, trimmed, expiresAt)
}

export interface ListedApiToken extends ApiTokenRecord {
  expired: boolean
  /** The token's reach (src/accounts/token-reach.ts); tokens made before reaches existed are 'full'. */
  scope: TokenScope
  /** scope 'publish': the packs it may publish versions of, as namespace:pack_id. */
  packs: string[]
}

/** The user's tokens that are not revoked, newest first; expired ones stay listed (marked) until revoked. */
export async function listApiTokens(db: Db, userId: string, now: number = Date.now()): Promise<ListedApiToken[]> {
  const rows = await listUserApiTokens(db, userId)
  // PLACEHOLDER until token reach lands (issue 10 item 5).
  return rows.map((row) => ({ ...row, expired: row.expires_at !== null && Date.parse(row.expires_at) <= now, scope: 'full' as const, packs: [] }))
}

/** Revokes one of the user's tokens at once; someone else's, an unknown or a malformed id is NotFound. */
export async function revokeApiToken(db: Db, userId: string, tokenId: string): Promise<void> {
  const ok = UUID_PATTERN.test(tokenId) && (await revokeUserApiToken(db, userId, tokenId.toLowerCase(), nowIso()))
  if (!ok) throw new NotFound('token not found')
}

/**
 * The user of `Bearer <username> <token>`, or undefined when the pair is not a
 * live token. The token is found by its hash (an indexed equality on a digest,
 * which leaks nothing useful through timing); the username must then match.
 */
export async function authenticateToken(db: Db, username: string, token: string): Promise<User | undefined> {
  if (!token.startsWith(API_TOKEN_PREFIX)) return undefined
  const now = Date.now()
  const owner = await findLiveTokenByHash(db, sha256Hex(token), nowIso(now))
  if (!owner || owner.usernameLower !== username.toLowerCase()) return undefined
  if (!owner.lastUsedAt || now - Date.parse(owner.lastUsedAt) > TOKEN_TOUCH_INTERVAL_MS) {
    await touchApiToken(db, owner.tokenId, nowIso(now))
  }
  return owner.user
}
