// The Atom feeds' addresses (served by src/feeds/routes.ts). Here, below both, because the feed token's
// settings (src/accounts/) show them and the feeds link to themselves.
import { FEED_TOKEN_PARAM } from '../api/notifications.js'

/** The route patterns, as src/feeds/routes.ts registers them. */
export const FEED_ROUTES = {
  pack: '/feeds/packs/:namespace/:pack_id/',
  user: '/feeds/users/:username/',
  newPacks: '/feeds/new/',
} as const

export function packFeedPath(namespace: string, packId: string): string {
  return `/feeds/packs/${encodeURIComponent(namespace)}/${encodeURIComponent(packId)}/`
}

export function userFeedPath(username: string): string {
  return `/feeds/users/${encodeURIComponent(username)}/`
}

export const NEW_PACKS_FEED_PATH = FEED_ROUTES.newPacks

/**
 * A feed's absolute address, carrying `token` when given. The token is base64url (src/auth/feed-tokens.ts),
 * so it needs no escaping, and the address carries it exactly as the feeds accept it.
 */
export function feedUrl(origin: string, path: string, token: string | null): string {
  return token === null ? `${origin}${path}` : `${origin}${path}?${FEED_TOKEN_PARAM}=${token}`
}
