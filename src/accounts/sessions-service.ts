// Signing in: the username and password checked under the account-password failure limit. The session it
// then opens is src/auth/sessions.ts (docs/decisions.md#sessions-and-csrf).
import type { App } from '../http/types.js'
import { Forbidden } from '../errors.js'
import { checkPasswordAttempt } from '../auth/attempts.js'
import type { User } from '../auth/user.js'
import { authenticatePassword } from './users-service.js'

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
