// Browser sessions (docs/decisions.md#sessions-and-csrf): a random token in an HttpOnly cookie, stored as its
// SHA-256. Signing in (the password check) is the accounts' (src/accounts/sessions-service.ts); this is the
// session itself: made, recognised on each request, ended.
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { deleteSession, findLiveSessionUser, insertSession } from './credentials-repository.js'
import { newSecret, sha256Hex } from './secrets.js'
import type { User } from './user.js'

const SESSION_PREFIX = 'ps_'

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
