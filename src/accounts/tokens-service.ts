// API tokens: issued by the admin CLI or by their owner on the settings page,
// shown once, stored as a SHA-256 and looked up by it (docs/decisions.md#tokens).
import { TOKEN_MAX_DAYS, TOKEN_MAX_PACKS, TOKEN_NAME_MAX, TOKEN_SCOPES, UUID_PATTERN, type TokenScope } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import {
  insertApiToken, listUserApiTokens, revokeUserApiToken, type ApiTokenRecord,
} from '../auth/credentials-repository.js'
import { newSecret, sha256Hex } from '../auth/secrets.js'
import { findPacksByNames, insertTokenPacks, listPublishablePackNames, listUserTokenPackNames, type FoundPack, type NamedPack } from './token-packs-repository.js'
import { packName, storedScope } from '../auth/token-reach.js'
import { API_TOKEN_PREFIX } from '../auth/tokens.js'
import { requireUser } from './users-service.js'
import type { User } from '../auth/user.js'


/**
 * What a new token may do, as asked: `scope` (full when absent) and, for
 * 'publish', the packs by name: `namespace:pack_id`, or `pack_id` alone for
 * one in the owner's namespace, in any case.
 */
export interface ReachRequest {
  scope?: string
  packs?: readonly string[]
}

/** One entry of `packs`: `namespace:pack_id` or a bare pack_id. Linear: no nested or overlapping repetition. */
const PACK_REFERENCE = /^(?:([a-z0-9_.-]{1,32}):)?([a-z0-9_-]{1,64})$/
/** How much of a refused entry a message repeats. */
const QUOTED_MAX = 80

/** A token for the named user (the admin CLI, and tests). The raw token is returned this once. */
export async function createApiToken(
  db: Db,
  username: string,
  name: string,
  expiresAt: Date | null = null,
  reach: ReachRequest = {},
): Promise<{ token: string; id: string; record: ListedApiToken }> {
  const user = await requireUser(db, username)
  const resolved = await resolveReach(db, user, reach)
  const { token, record } = await insertNewToken(db, user.id, name, expiresAt, resolved)
  return { token, id: record.id, record }
}

async function insertNewToken(
  db: Db, userId: string, name: string, expiresAt: Date | null, reach: ResolvedReach,
): Promise<{ token: string; record: ListedApiToken }> {
  const token = newSecret(API_TOKEN_PREFIX)
  let row
  try {
    // One transaction: a token never exists with half its packs.
    row = await db.transaction().execute(async (trx) => {
      const inserted = await insertApiToken(trx, {
        userId, name, tokenHash: sha256Hex(token), expiresAt: expiresAt ? expiresAt.toISOString() : null, scope: reach.scope,
      })
      await insertTokenPacks(trx, inserted.id, reach.packs.map((pack) => pack.id))
      return inserted
    })
  } catch (error) {
    // A pack deleted between the check and the insert: its foreign key refuses the row, and nothing was made.
    if (reach.packs.length > 0) {
      const still = new Set((await findPacksByNames(db, reach.packs, userId)).map((pack) => pack.id))
      const gone = reach.packs.filter((pack) => !still.has(pack.id))
      if (gone.length > 0) throw new Conflict(`deleted meanwhile: ${gone.map(packName).join(', ')}; no token was made`)
    }
    throw error
  }
  return {
    token,
    record: {
      id: row.id, name: row.name, created_at: row.created_at, last_used_at: row.last_used_at, expires_at: row.expires_at,
      scope: reach.scope, expired: false, packs: reach.packs.map(packName),
    },
  }
}

interface ResolvedReach {
  scope: TokenScope
  packs: FoundPack[]
}

/**
 * Checks a requested reach and finds its packs. A publish token must name at
 * least one pack, and only packs `owner` owns, staff included: the reach is
 * for releasing one's own packs from a build job, and staff who act on
 * others' packs do it as themselves, with a full token or the site. Unknown
 * packs and someone else's are refused alike (named, in one 400), so the
 * answer says nothing about which of them exist (a hidden pack stays unseen).
 */
async function resolveReach(db: Db, owner: User, request: ReachRequest): Promise<ResolvedReach> {
  const scope = request.scope ?? 'full'
  if (!(TOKEN_SCOPES as readonly string[]).includes(scope)) {
    throw new BadRequest(`scope must be one of ${TOKEN_SCOPES.join(', ')}`)
  }
  const requested = request.packs ?? []
  if (scope !== 'publish') {
    // An empty list names nothing, so it is no contradiction.
    if (requested.length > 0) {
      throw new BadRequest(`packs are only for a publish token (scope "publish"); a ${scope} token names no packs`)
    }
    return { scope: scope as TokenScope, packs: [] }
  }
  if (requested.length === 0) {
    throw new BadRequest('a publish token needs at least one of your packs in "packs" (namespace:pack_id, or pack_id alone for one in your namespace)')
  }
  if (requested.length > TOKEN_MAX_PACKS) throw new BadRequest(`a token may name at most ${TOKEN_MAX_PACKS} packs`)

  const ownNamespace = owner.username.toLowerCase()
  const malformed: string[] = []
  const wanted = new Map<string, NamedPack>()
  for (const entry of requested) {
    const match = typeof entry === 'string' ? PACK_REFERENCE.exec(entry.trim().toLowerCase()) : null
    if (!match) {
      malformed.push(quote(entry))
      continue
    }
    const named = { namespace: match[1] ?? ownNamespace, packId: match[2]! }
    wanted.set(packName(named), named)
  }
  if (malformed.length > 0) {
    throw new BadRequest(`not a pack name: ${malformed.join(', ')} (expected namespace:pack_id, or pack_id alone for one of your packs)`)
  }
  const found = await findPacksByNames(db, [...wanted.values()], owner.id)
  const owned = new Map(found.filter((pack) => pack.publishable).map((pack) => [packName(pack), pack]))
  const notYours = [...wanted.keys()].filter((name) => !owned.has(name))
  if (notYours.length > 0) {
    throw new BadRequest(`not among your packs: ${notYours.join(', ')} (a publish token may only name packs you own or are in the team of)`)
  }
  return { scope: 'publish', packs: [...owned.values()].sort((a, b) => compare(packName(a), packName(b))) }
}

function quote(entry: unknown): string {
  const text = typeof entry === 'string' ? entry : String(entry)
  return JSON.stringify(text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX)}…` : text)
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * A token the user asked for on the settings page (or its API): the name is
 * trimmed and must keep 1-64 characters; `expiresInDays` null means it never
 * expires; `reach` limits what it may do (full when absent). The raw token is
 * returned this once; only its hash is stored.
 */
export async function issueApiToken(
  db: Db,
  user: User,
  name: string,
  expiresInDays: number | null,
  reach: ReachRequest = {},
  now: number = Date.now(),
): Promise<{ token: string; record: ListedApiToken }> {
  const trimmed = name.trim()
  if (trimmed.length === 0) throw new BadRequest('name must not be empty')
  if (trimmed.length > TOKEN_NAME_MAX) throw new BadRequest(`name must be at most ${TOKEN_NAME_MAX} characters`)
  // Control characters (a pasted tab or newline) would only confuse the list.
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw new BadRequest('name must not contain control characters')
  checkExpiry(expiresInDays)
  const resolved = await resolveReach(db, user, reach)
  const expiresAt = expiresInDays === null ? null : new Date(now + expiresInDays * 86_400_000)
  return insertNewToken(db, user.id, trimmed, expiresAt, resolved)
}

/** A lifetime in whole days (1 to TOKEN_MAX_DAYS), or null for a token that never expires. */
export function checkExpiry(expiresInDays: number | null): void {
  if (expiresInDays !== null && (!Number.isInteger(expiresInDays) || expiresInDays < 1 || expiresInDays > TOKEN_MAX_DAYS)) {
    throw new BadRequest(`expires_in_days must be a whole number of days from 1 to ${TOKEN_MAX_DAYS}, or null for a token that never expires`)
  }
}

export interface ListedApiToken extends Omit<ApiTokenRecord, 'scope'> {
  expired: boolean
  /** The token's reach (src/auth/token-reach.ts); tokens made before reaches existed are 'full'. */
  scope: TokenScope
  /** scope 'publish': the packs it may publish versions of, as namespace:pack_id (current names; deleted ones are gone). */
  packs: string[]
}

/** The user's tokens that are not revoked, newest first; expired ones stay listed (marked) until revoked. */
export async function listApiTokens(db: Db, userId: string, now: number = Date.now()): Promise<ListedApiToken[]> {
  const [rows, packNames] = await Promise.all([listUserApiTokens(db, userId), listUserTokenPackNames(db, userId)])
  return rows.map((row) => {
    const scope = storedScope(row.scope)
    return {
      ...row,
      expired: row.expires_at !== null && Date.parse(row.expires_at) <= now,
      scope,
      packs: scope === 'publish' ? (packNames.get(row.id) ?? []).map(packName) : [],
    }
  })
}

/** The packs a publish token of `userId` may name (their own and their teams'), as `namespace:pack_id` with their titles, by title. */
export async function listPublishablePacks(db: Db, userId: string): Promise<Array<{ name: string; title: string }>> {
  return (await listPublishablePackNames(db, userId)).map((pack) => ({ name: packName(pack), title: pack.title }))
}

/** Revokes one of the user's tokens at once; someone else's, an unknown or a malformed id is NotFound. */
export async function revokeApiToken(db: Db, userId: string, tokenId: string): Promise<void> {
  const ok = UUID_PATTERN.test(tokenId) && (await revokeUserApiToken(db, userId, tokenId.toLowerCase(), nowIso()))
  if (!ok) throw new NotFound('token not found')
}
