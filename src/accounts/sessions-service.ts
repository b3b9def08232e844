// Browser sessions (docs/decisions.md#sessions-and-csrf): a random token in an HttpOnly cookie,
// stored as its SHA-256; signing in checks the password under the
// account-password failure limit.
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import type { App } from '../http/types.js'
import { Forbidden } from '../errors.js'
import { checkPasswordAttempt } from './attempts.js'
import { deleteSession, findLiveSessionUser, insertSession } from './credentials-repository.js'
import { newSecret, sha256Hex } from './secrets.js'
import type { User } from './users-repository.js'
import { authenticatePassword } from './users-service.js'

const SESSION_PREFIX = 'ps_'

/**
 * The user of this name and password, counted against the client: 401 for a
 * wrong pair, 429 while it is blocked, 403 for the right pair of an account
 * staff have disabled (said only after the password was right, so it tells a
 * guesser nothing).
 */
export async function signIn(app: App, clientAddress: string, username: string, password: string): Promise<User> {
  let user: (User & { disabled: boolean }) | undefined
  await checkPasswordAttempt(app, 'login', clientAddress, async () => {
    user = await authenticatePassword(app.db, app.passwords, username, password)
    return user !== undefined
  }, 'wrong username or password')
  const { disabled, ...signedIn } = user!
  if (disabled) throw new Forbidden('this account has been disabled by staff, so it cannot sign in')
  return signedIn
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
