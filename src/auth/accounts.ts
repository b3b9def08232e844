// Users, API tokens and sessions: the rules around the stored credentials.
import type { Db } from '../db/index.js'
import {
  deleteSession, findLiveSessionUser, findLiveTokenByHash, insertApiToken, insertSession, touchApiToken,
} from '../db/credentials.js'
import { nowIso } from '../db/time.js'
import { findUserRowByUsername, insertUser, rowToUser, updateUser, type User } from '../db/users.js'
import { BadRequest, Conflict, NotFound } from '../domain/errors.js'
import { USERNAME_PATTERN, validateUsername } from '../domain/usernames.js'
import { hashPassword, newSecret, sha256Hex, verifyPassword } from './secrets.js'

export const API_TOKEN_PREFIX = 'packs_'
const SESSION_PREFIX = 'ps_'
/** last_used_at is a hint for the owner, not an audit log: write it at most once a minute per token. */
const TOKEN_TOUCH_INTERVAL_MS = 60_000
const MIN_PASSWORD_LENGTH = 8

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

// A fixed hash to verify against when the user does not exist, so a missing
// user costs the same scrypt time as a wrong password and names cannot be probed.
let decoyHash: Promise<string> | undefined

/** The user whose name and password these are, or undefined. */
export async function authenticatePassword(db: Db, username: string, password: string): Promise<User | undefined> {
  const row = USERNAME_PATTERN.test(username) ? await findUserRowByUsername(db, username) : undefined
  if (!row) {
    decoyHash ??= hashPassword('decoy password')
    await verifyPassword(password, await decoyHash)
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
  const token = newSecret(API_TOKEN_PREFIX)
  const row = await insertApiToken(db, {
    userId: user.id,
    name,
    tokenHash: sha256Hex(token),
    expiresAt: expiresAt ? expiresAt.toISOString() : null,
  })
  return { token, id: row.id }
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
