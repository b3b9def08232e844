// The in-game update-check (SPEC: GET /api/packs/{namespace}/{pack_id}/latest).
// Every player's game asks on every start, so the answer is served from the
// cache (./cache.ts) as the exact bytes sent, with their ETag, and computed
// only after a publish or a new version of its pack has dropped it.
import { createHash } from 'node:crypto'
import type { Db } from '../db/index.js'
import { NotFound } from '../errors.js'
import { packKey, type UpdateCheckAnswer, type UpdateCheckCache } from './cache.js'
import { toPackLatest } from './mapper.js'
import { findCandidateVersions, findNewestVersion, publicPackExists } from './repository.js'
import { isKnownRelease, newestKnownRelease, supports, type GameQuery } from '../minecraft/releases.js'

/** The 404 for a pack whose every version is yanked or deleted, or none of whose versions fits the game asked about. */
function noVersionDetail(game: GameQuery | undefined): string {
  if (game === undefined) return 'the pack has no version to offer: every version is yanked or deleted'
  const what = 'release' in game ? `Minecraft ${game.release}` : `pack format ${game.packFormat}`
  return `no version of the pack supports ${what} (by the formats its pack.mcmeta declares)`
}
import type { FileUrls } from '../packs/mapper.js'

export interface UpdateCheckDeps {
  db: Db
  updateCheckCache: UpdateCheckCache
}

/**
 * The answer for the pack, serialised, with its ETag; NotFound when the pack
 * does not exist. download_url is absolute, so answers are kept per `origin`
 * (the origin `urls` builds them with). Namespace and pack id are matched
 * case-insensitively (they are stored in lower case).
 */
export async function updateCheck(
  deps: UpdateCheckDeps,
  namespace: string,
  packId: string,
  origin: string,
  urls: FileUrls,
  game?: GameQuery,
): Promise<NonNullable<UpdateCheckAnswer>> {
  const lowerNamespace = namespace.toLowerCase()
  const lowerPackId = packId.toLowerCase()
  // A release the table does not know cannot be matched: said before any lookup (and never cached: the name is the client's).
  if (game !== undefined && 'release' in game && !isKnownRelease(game.release)) {
    throw new NotFound(`unknown Minecraft release "${game.release}": this site knows releases up to ${newestKnownRelease()}`)
  }
  const key = packKey(lowerNamespace, lowerPackId)
  const variant = game === undefined ? '' : 'release' in game ? `r:${game.release}` : `f:${game.packFormat}`
  const cache = deps.updateCheckCache
  // With REDIS_URL: one small read, so a publish through another instance is seen at once.
  if (cache.revalidate !== undefined) await cache.revalidate(key)
  let answer = cache.get(key, origin, variant)
  if (answer === undefined) {
    const generation = cache.currentGeneration()
    const newest = game === undefined
      ? await findNewestVersion(deps.db, lowerNamespace, lowerPackId)
      : (await findCandidateVersions(deps.db, lowerNamespace, lowerPackId)).find((v) => supports(v.declaration, v.packFormat, game))
    if (newest) answer = withEtag(JSON.stringify(toPackLatest(newest, urls)))
    else if (await publicPackExists(deps.db, lowerNamespace, lowerPackId)) answer = { body: noVersionDetail(game), etag: '', noVersion: true }
    else answer = null
    cache.set(key, origin, answer, generation, variant)
  }
  if (answer === null) throw new NotFound('pack not found')
  if (answer.noVersion) throw new NotFound(answer.body)
  return answer
}

/**
 * Drops the pack's cached answers after anything that changes them: a
 * publish, a new version, an edited title, a yank, a deletion, hiding, an
 * account disabled (a "not found" from before it existed included). Awaited before the change is
 * answered: with REDIS_URL, every instance will then see it.
 */
export async function packChanged(cache: UpdateCheckCache, namespace: string, packId: string): Promise<void> {
  await cache.invalidate(packKey(namespace, packId))
}

/** The ETag is the hash of exactly the bytes sent, computed once per cached answer. */
function withEtag(body: string): NonNullable<UpdateCheckAnswer> {
  return { body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` }
}
