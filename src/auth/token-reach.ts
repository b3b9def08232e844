// A token's reach: what a request made with it may do.
//   full    everything its owner may do (every token made before reaches existed);
//   read    safe methods only (GET, HEAD, OPTIONS): it can change nothing;
//   publish read, plus `POST /api/packs/{namespace}/{pack_id}/versions/` for the
//           packs it names (the CI case: a build job that can only release them).
// The rule is decided from the token and the route alone, before the route
// looks anything up: a refusal says the same whatever the pack named in the
// path is (someone else's, hidden, missing), so it tells nothing about packs.
// src/auth/plugin.ts applies it once per request; sessions have no reach.
import { TOKEN_SCOPES, type TokenScope } from '../api/constants.js'

/** A pack a publish token names, by its row id and its current names (lower case, as stored). */
export interface ReachPack {
  id: string
  namespace: string
  packId: string
}

export interface TokenReach {
  scope: TokenScope
  /** scope 'publish': the packs it may publish versions of (empty once they are all deleted); otherwise empty. */
  packs: readonly ReachPack[]
}

export const FULL_REACH: TokenReach = Object.freeze({ scope: 'full', packs: Object.freeze([]) })

/** The one route a publish token may change things through, as registered in src/packs/routes.ts. */
export const PUBLISH_VERSION_ROUTE = '/api/packs/:namespace/:pack_id/versions/'

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * The scope stored for a token. A value this code does not know (a row
 * written by some later version, say) is taken as read-only: a token must
 * never reach further than it was given.
 */
export function storedScope(value: string): TokenScope {
  return (TOKEN_SCOPES as readonly string[]).includes(value) ? (value as TokenScope) : 'read'
}

/** `namespace:pack_id`, as pages and the CLI name a pack. */
export function packName(pack: Pick<ReachPack, 'namespace' | 'packId'>): string {
  return `${pack.namespace}:${pack.packId}`
}

/**
 * Why a request is beyond the token's reach (the 403 detail, naming what the
 * token may do), or undefined when it is within it. `routeUrl` is the matched
 * route's path pattern (undefined: no route matched, and the 404 that follows
 * changes nothing); `params` its path parameters; `readsOnly` marks a route
 * that changes nothing whatever its method (a batch lookup by POST).
 */
export function reachRefusal(reach: TokenReach, method: string, routeUrl: string | undefined, params: unknown, readsOnly = false): string | undefined {
  if (reach.scope === 'full' || readsOnly || SAFE_METHODS.has(method) || routeUrl === undefined) return undefined
  if (reach.scope === 'read') {
    return 'this token is read-only: it may only read (GET, HEAD and OPTIONS requests); changing anything needs a token with more reach'
  }
  if (method === 'POST' && routeUrl === PUBLISH_VERSION_ROUTE && reachesPack(reach, params)) return undefined
  return publishRefusal(reach)
}

/** Whether the path's namespace and pack_id (any case, as the routes accept them) name one of the token's packs. */
function reachesPack(reach: TokenReach, params: unknown): boolean {
  const { namespace, pack_id: packId } = (params ?? {}) as Record<string, unknown>
  if (typeof namespace !== 'string' || typeof packId !== 'string') return false
  const ns = namespace.toLowerCase()
  const id = packId.toLowerCase()
  return reach.packs.some((pack) => pack.namespace === ns && pack.packId === id)
}

function publishRefusal(reach: TokenReach): string {
  const beyond = 'uploads, drafts, new packs and every other change need a full-access token'
  if (reach.packs.length === 0) {
    return `this token could only publish new versions of packs that have all been deleted since, or whose teams its owner has left: it may now only read; ${beyond}`
  }
  return `this token may only publish new versions of ${reach.packs.map(packName).join(', ')} `
    + `(POST /api/packs/{namespace}/{pack_id}/versions/) and read; ${beyond}`
}
