// Users, API tokens and sessions: the rules around the stored credentials.
import type { Db } from '../db/index.js'
import {
  deleteSession, findLiveSessionUser, findLiveTokenByHash, findPasswordHash, insertApiToken, insertSession,
  listUserApiTokens, replacePasswordHash, revokeUserApiToken, touchApiToken, type ApiTokenRecord,
} from './credentials-repository.js'
import { nowIso } from '../db/time.js'
import { findUserRowByUsername, insertUser, rowToUser, updateUser, type User } from './users-repository.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import { USERNAME_PATTERN, validateUsername } from './usernames.js'
import { UUID_PATTERN } from '../api/common.js'
import { DECOY_PASSWORD_HASH, hashPassword, newSecret, sha256Hex, verifyPassword } from './secrets.js'

export const API_TOKEN_PREFIX = 'packs_'
const SESSION_PREFIX = 'ps_'
/** last_used_at is a hint for the owner, not an audit log: write it at most once a minute per token. */
const TOKEN_TOUCH_INTERVAL_MS = 60_000
export const MIN_PASSWORD_LENGTH = 8
/** Longest name of an API token (a label for its owner). */
export const TOKEN_NAME_MAX = 64
/** Longest lifetime a new API token may be given, in days (about ten years). */
export const TOKEN_MAX_DAYS = 3650

export async function createUser(db: Db, username: string, password: string, isStaff = false): Promise<User> {
  validateUsername(username)
  if (password.length < MIN_PASSWORD_LENGTH) throw new BadRequest(`password must be at least ${MIN_PASSWORD_LENGTH} characters`)
  if (await findUserRowByUsername(db, username)) throw new Conflict(`username "${username}" is taken`)
  const passwordHash = await hashPassword(password)
  try {
    return await insertUser(db, username, passwordHash, isStaff)
  } catch (error) {
    // Two sign-ups racing for one name: the unique index decides.
    if (await findUserRowByUsername(db, username)) throw new Conflict(`username "${username}" is taken`)
    throw error
  }
}

export async function requireUser(db: Db, username: string): Promise<User> {
  const row = await findUserRowByUsername(db, username)
  if (!row) throw new NotFound(`no user "${username}"`)
  return rowToUser(row)
}

export async function setStaff(db: Db, username: string, isStaff: boolean): Promise<User> {
  const user = await requireUser(db, username)
  await updateUser(db, user.id, { is_staff: isStaff ? 1 : 0 })
  return { ...user, isStaff }
}

export async function setPassword(db: Db, username: string, password: string): Promise<void> {
  if (password.length < MIN_PASSWORD_LENGTH) throw new BadRequest(`password must be at least ${MIN_PASSWORD_LENGTH} characters`)
  const user = await requireUser(db, username)
  await updateUser(db, user.id, { password_hash: await hashPassword(password) })
}

/**
 * The user whose name and password these are, or undefined. A name that does
 * not exist is verified against a decoy hash: one scrypt, as for a wrong
 * password, so names cannot be probed by timing.
 */
export async function authenticatePassword(db: Db, username: string, password: string): Promise<User | undefined> {
  const row = USERNAME_PATTERN.test(username) ? await findUserRowByUsername(db, username) : undefined
  if (!row) {
    await verifyPassword(password, DECOY_PASSWORD_HASH)
    return undefined
  }
  return (await verifyPassword(password, row.password_hash)) ? rowToUser(row) : undefined
}

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
}

/** The user's tokens that are not revoked, newest first; expired ones stay listed (marked) until revoked. */
export async function listApiTokens(db: Db, userId: string, now: number = Date.now()): Promise<ListedApiToken[]> {
  const rows = await listUserApiTokens(db, userId)
  return rows.map((row) => ({ ...row, expired: row.expires_at !== null && Date.parse(row.expires_at) <= now }))
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

export async function startSession(db: Db, userId: string, ttlMs: number): Promise<{ token: string; expiresAt: Date }> {
  const token = newSecret(SESSION_PREFIX)
  const expiresAt = new Date(Date.now() + ttlMs)
  await insertSession(db, userId, sha256Hex(token), expiresAt.toISOString())
  return { token, expiresAt }
}

export async function authenticateSession(db: Db, token: string): Promise<User | undefined> {
  if (!token.startsWith(SESSION_PREFIX)) return undefined
  return findLiveSessionUser(db, sha256Hex(token), nowIso())
}

export async function endSession(db: Db, token: string): Promise<void> {
  await deleteSession(db, sha256Hex(token))
}

/** Whether `password` is the user's current password (same scrypt cost either way). */
export async function checkCurrentPassword(db: Db, userId: string, password: string): Promise<boolean> {
  const hash = await findPasswordHash(db, userId)
  if (!hash) return false
  return verifyPassword(password, hash)
}

/**
 * Sets a new password and ends every other session of the user: someone who
 * knew the old password is signed out everywhere except where the change was
 * made (`keepSessionToken`, the caller's own session; null ends them all).
 * API tokens stay valid: they are separate credentials, revoked on their own page.
 * Returns how many sessions were ended.
 */
export async function changePassword(db: Db, userId: string, newPassword: string, keepSessionToken: string | null): Promise<number> {
  checkNewPassword(newPassword)
  return replacePasswordHash(db, userId, await hashPassword(newPassword), keepSessionToken === null ? null : sha256Hex(keepSessionToken))
}

/** The rules a new password must meet (sign-up, change). */
export function checkNewPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new BadRequest(`password must be at least ${MIN_PASSWORD_LENGTH} characters`)
}
