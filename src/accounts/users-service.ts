// Users and their passwords: sign-up, the admin CLI's changes, and the
// password checks of sign-in and password change. Every scrypt goes through
// the PasswordHasher the caller hands in (app.passwords, or the CLI's).
import { USERNAME_PATTERN } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import type { App } from '../http/types.js'
import { checkPasswordAttempt } from '../auth/attempts.js'
import { deleteUserSessions } from '../auth/credentials-repository.js'
import type { PasswordHasher } from '../auth/passwords.js'
import { sha256Hex } from '../auth/secrets.js'
import { validateUsername } from './usernames.js'
import { findPasswordHash, findUserRowByUsername, insertUser, updateUser } from './users-repository.js'
import { rowToUser, type User } from '../auth/user.js'

export const MIN_PASSWORD_LENGTH = 8

export async function createUser(db: Db, passwords: PasswordHasher, username: string, password: string, isStaff = false): Promise<User> {
  validateUsername(username)
  checkNewPassword(password)
  if (await findUserRowByUsername(db, username)) throw new Conflict(`username "${username}" is taken`)
  const passwordHash = await passwords.hash(password)
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

/** Sets a user's password by name (the admin's way; a user changes theirs with changePassword). */
export async function setPassword(db: Db, passwords: PasswordHasher, username: string, password: string): Promise<void> {
  checkNewPassword(password)
  const user = await requireUser(db, username)
  await updateUser(db, user.id, { password_hash: await passwords.hash(password) })
}

/**
 * The user whose name and password these are, or undefined. A name that does
 * not exist costs one scrypt too, as a wrong password does, so names cannot
 * be probed by timing. `disabled`: staff disabled the account (sign-in refuses
 * it, telling only someone who knew the password).
 */
export async function authenticatePassword(
  db: Db, passwords: PasswordHasher, username: string, password: string,
): Promise<(User & { disabled: boolean }) | undefined> {
  const row = USERNAME_PATTERN.test(username) ? await findUserRowByUsername(db, username) : undefined
  if (!row) {
    await passwords.verifyNobody(password)
    return undefined
  }
  return (await passwords.verify(password, row.password_hash)) ? { ...rowToUser(row), disabled: row.disabled_at !== null } : undefined
}

/** Whether `password` is the user's current password (same scrypt cost either way). */
export async function checkCurrentPassword(db: Db, passwords: PasswordHasher, userId: string, password: string): Promise<boolean> {
  const hash = await findPasswordHash(db, userId)
  if (!hash) return false
  return passwords.verify(password, hash)
}

/**
 * Sets a new password and ends every other session of the user: someone who
 * knew the old password is signed out everywhere except where the change was
 * made (`keepSessionToken`, the caller's own session; null ends them all).
 * API tokens stay valid: they are separate credentials, revoked on their own page.
 * Returns how many sessions were ended.
 */
export async function changePassword(
  db: Db, passwords: PasswordHasher, userId: string, newPassword: string, keepSessionToken: string | null,
): Promise<number> {
  checkNewPassword(newPassword)
  const passwordHash = await passwords.hash(newPassword)
  const keepSessionHash = keepSessionToken === null ? null : sha256Hex(keepSessionToken)
  // One transaction: no moment where the new password works and a session from before the change still does.
  return db.transaction().execute(async (trx) => {
    await updateUser(trx, userId, { password_hash: passwordHash })
    return deleteUserSessions(trx, userId, keepSessionHash)
  })
}

/**
 * A signed-in user changes their own password (changePassword). A wrong
 * current password counts as a failed sign-in attempt: a stolen session must
 * not become a password oracle.
 */
export async function changeOwnPassword(
  app: App, clientAddress: string, userId: string, currentPassword: string, newPassword: string, keepSessionToken: string | null,
): Promise<number> {
  await checkPasswordAttempt(app, 'login', clientAddress,
    () => checkCurrentPassword(app.db, app.passwords, userId, currentPassword), 'the current password is wrong')
  // Hashing the new one may be refused when the server is busy (429), as the check may.
  return changePassword(app.db, app.passwords, userId, newPassword, keepSessionToken)
}

/** The rules a new password must meet (sign-up, change). */
export function checkNewPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new BadRequest(`password must be at least ${MIN_PASSWORD_LENGTH} characters`)
}
