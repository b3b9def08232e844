// Who is calling: the signed-in user as every request carries it (request.user), read from a users row.
import type { UsersTable } from '../db/schema.js'

export interface User {
  id: string
  username: string
  isStaff: boolean
}

export function rowToUser(row: Pick<UsersTable, 'id' | 'username' | 'is_staff'>): User {
  return { id: row.id, username: row.username, isStaff: row.is_staff === 1 }
}
