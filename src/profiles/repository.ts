// The SQL of profiles: the account a profile is of. Its packs come from the
// packs' listing (src/packs/repository.ts listPacks, filtered by owner).
import type { Db } from '../db/index.js'

export interface ProfileAccount {
  id: string
  username: string
  createdAt: string
  disabledAt: string | null
}

/** The account of this name in any case (username_lower is the unique key). */
export async function findProfileAccount(db: Db, username: string): Promise<ProfileAccount | undefined> {
  const row = await db
    .selectFrom('users')
    .select(['id', 'username', 'created_at', 'disabled_at'])
    .where('username_lower', '=', username.toLowerCase())
    .executeTakeFirst()
  return row && { id: row.id, username: row.username, createdAt: row.created_at, disabledAt: row.disabled_at }
}
