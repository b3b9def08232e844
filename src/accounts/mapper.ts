// Accounts in the API's shapes (src/api/tokens.ts, src/api/accounts.ts, src/api/notifications.ts).
import type { MeBody } from '../api/accounts.js'
import type { FeedTokenBody } from '../api/notifications.js'
import { NEW_PACKS_FEED_PATH, feedUrl, userFeedPath } from '../http/feed-urls.js'
import type { FeedTokenRecord } from './feed-token-service.js'
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

/**
 * The feed token and the feed addresses that carry it (absolute, from `origin`); all null when the user has
 * none. The pack and user addresses are templates: {namespace}, {pack_id} and {username} stay as written.
 */
export function toFeedToken(record: FeedTokenRecord | undefined, owner: User, origin: string): FeedTokenBody {
  const token = record?.token ?? null
  return {
    token,
    created_at: record?.createdAt ?? null,
    last_used_at: record?.lastUsedAt ?? null,
    feeds: token === null ? null : {
      new_packs: feedUrl(origin, NEW_PACKS_FEED_PATH, token),
      your_packs: feedUrl(origin, userFeedPath(owner.username), token),
      pack: feedUrl(origin, '/feeds/packs/{namespace}/{pack_id}/', token),
      user: feedUrl(origin, '/feeds/users/{username}/', token),
    },
  }
}
