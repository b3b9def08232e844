// API tokens as credentials: the token a request carries, recognised by its hash (docs/decisions.md#tokens).
// Issuing, listing and revoking them is the accounts' (src/accounts/tokens-service.ts).
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { Unauthorized } from '../errors.js'
import { findLiveTokenByHash, touchApiToken } from './credentials-repository.js'
import { sha256Hex } from './secrets.js'
import type { TokenReach } from './token-reach.js'
import type { User } from './user.js'

export const API_TOKEN_PREFIX = 'packs_'
/** last_used_at is a hint for the owner, not an audit log: write it at most once a minute per token. */
const TOKEN_TOUCH_INTERVAL_MS = 60_000

/**
 * The user of `Bearer <username> <token>` and the token's reach, or undefined
 * when the pair is not a live token. The token is found by its hash (an
 * indexed equality on a digest, which leaks nothing useful through timing);
 * the username must then match. `username` null: the token alone, as
 * Modrinth's clients send it (`Authorization: <token>`, src/modrinth/); it
 * is as unguessable without the name as with it.
 */
export async function authenticateToken(db: Db, username: string | null, token: string): Promise<{ user: User; reach: TokenReach } | undefined> {
  if (!token.startsWith(API_TOKEN_PREFIX)) return undefined
  const now = Date.now()
  const owner = await findLiveTokenByHash(db, sha256Hex(token), nowIso(now))
  if (!owner || (username !== null && owner.usernameLower !== username.toLowerCase())) return undefined
  // Only the holder of a real token of this account (name and token) learns that it is disabled.
  if (owner.disabled) throw new Unauthorized('this account has been disabled by staff; its tokens do not work while it is')
  if (!owner.lastUsedAt || now - Date.parse(owner.lastUsedAt) > TOKEN_TOUCH_INTERVAL_MS) {
    await touchApiToken(db, owner.tokenId, nowIso(now))
  }
  return { user: owner.user, reach: owner.reach }
}
