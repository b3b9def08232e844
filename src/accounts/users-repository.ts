// Users: every query of the users table (their credentials: credentials-repository.ts).
import { randomUUID } from 'node:crypto'
import type { Db } from '../db/index.js'
import type { UsersTable } from '../db/schema.js'
import { nowIso } from '../db/time.js'
import { rowToUser, type User } from '../auth/user.js'

export type UserRow = UsersTable

export async function insertUser(db: Db, username: string, passwordHash: string, isStaff: boolean): Promise<User> {
  const row: UserRow = {
    id: randomUUID(),
    username,
    username_lower: username.toLowerCase(),
    password_hash: passwordHash,
    is_staff: isStaff ? 1 : 0,
    created_at: nowIso(),
    disabled_at: null,
  }
  await db.insertInto('users').values(row).execute()
  return rowToUser(row)
}

export async function findUserRowByUsername(db: Db, username: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('username_lower', '=', username.toLowerCase()).executeTakeFirst()
}

export async function updateUser(db: Db, userId: string, changes: Partial<Pick<UserRow, 'is_staff' | 'password_hash'>>): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', userId).execute()
}

export async function findPasswordHash(db: Db, userId: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst()
  return row?.password_hash
}

/**
 * Usernames starting with `prefix`, case-insensitively. A range scan on the
 * unique index instead of LIKE, so `%`, `_` and quotes are plain characters
 * and the same index serves SQLite and PostgreSQL.
 */
export async function searchUsernames(db: Db, prefix: string, limit: number): Promise<string[]> {
  // A disabled account is never suggested: its profile is gone (404) and its packs hidden, so naming it would
  // only reveal that it exists.
  let query = db.selectFrom('users').select('username').where('disabled_at', 'is', null).orderBy('username_lower').limit(limit)
  if (prefix !== '') {
    const lower = prefix.toLowerCase()
    query = query.where('username_lower', '>=', lower).where('username_lower', '<', prefixUpperBound(lower))
  }
  return (await query.execute()).map((r) => r.username)
}

/** The smallest string greater than every string that starts with `prefix`. */
export function prefixUpperBound(prefix: string): string {
  return prefix + '\u{10FFFF}'
}
