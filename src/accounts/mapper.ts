// Accounts in the API's shapes (src/api/tokens.ts, src/api/accounts.ts).
import type { MeBody } from '../api/accounts.js'
import type { ApiTokenBody, CreatedTokenBody } from '../api/tokens.js'
import type { ListedApiToken } from './tokens-service.js'
import type { User } from '../auth/user.js'

export function toApiToken(token: ListedApiToken): ApiTokenBody {
  return {
    id: token.id,
    name: token.name,
    created_at: token.created_at,
    last_used_at: token.last_used_at,
    expires_at: token.expires_at,
    expired: token.expired,
    scope: token.scope,
    packs: token.packs,
  }
}

/** A token just made, with its reach: the only answer that carries the secret, with the header value that uses it. */
export function toCreatedToken(record: ListedApiToken, token: string, owner: User): CreatedTokenBody {
  return { ...toApiToken(record), token, authorization: `Bearer ${owner.username} ${token}` }
}

export function toMe(user: User, csrfToken: string | null): MeBody {
  return { username: user.username, is_staff: user.isStaff, csrf_token: csrfToken }
}
