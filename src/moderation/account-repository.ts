// The SQL of disabling accounts (src/moderation/account-service.ts).
import type { Db } from '../db/index.js'

export interface AccountState {
  id: string
  username: string
  isStaff: boolean
  createdAt: string
  disabledAt: string | null
}

/** The account of this name (any case), with its disabled mark. */
export async function findAccountState(db: Db, username: string): Promise<AccountState | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'username', 'is_staff', 'created_at', 'disabled_at'])
    .where('username_lower', '=', username.toLowerCase())
    .executeTakeFirst()
  return row && { id: row.id, username: row.username, isStaff: row.is_staff === 1, createdAt: row.created_at, disabledAt: row.disabled_at }
}

/**
 * Sets (a time) or clears (null) the account's disabled mark; false when it
 * was already so (the condition is in the UPDATE: of two concurrent requests,
 * one changes it).
 */
export async function updateDisabledAt(db: Db, userId: string, disabledAt: string | null): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ disabled_at: disabledAt })
    .where('id', '=', userId)
    .where('disabled_at', disabledAt === null ? 'is not' : 'is', null)
    .executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}
