// The in-game update-check (GET /api/packs/{namespace}/{pack_id}/latest).
// Every player's game asks on every start, so the answer is served from the
// cache (./cache.ts) as the exact bytes sent, with their ETag, and computed
// only after a publish or a new version of its pack has dropped it.
import { createHash } from 'node:crypto'
import type { Db } from '../db/index.js'
import { NotFound } from '../errors.js'
import { packKey, type UpdateCheckAnswer, type UpdateCheckCache } from './cache.js'
import { toPackLatest } from './mapper.js'
import { MAX_CANDIDATES, findCandidateVersions, findNewestVersion, findVersionsOfPacks, publicPackExists, type CandidateVersion, type PackKey } from './repository.js'
import { isKnownRelease, newestKnownRelease, supports, type GameQuery } from '../minecraft/releases.js'
import type { FileUrls } from '../http/urls.js'

/** The 404 for a pack whose every version is yanked or deleted, or none of whose versions fits the game asked about. */
function noVersionDetail(game: GameQuery | undefined): string {
  if (game === undefined) return 'the pack has no version to offer: every version is yanked or deleted'
  const what = 'release' in game ? `Minecraft ${game.release}` : `pack format ${game.packFormat}`
  return `no version of the pack supports ${what} (by the formats its pack.mcmeta declares)`
}

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
  assertKnownRelease(game)
  const key = packKey(lowerNamespace, lowerPackId)
  const variant = variantOf(game)
  const cache = deps.updateCheckCache
  // With REDIS_URL: nothing while invalidations arrive by themselves; else one small read.
  const asking = cache.revalidate?.(key)
  if (asking !== undefined) await asking
  let answer = cache.get(key, origin, variant)
  if (answer === undefined) {
    cache.counts.misses++
    const generation = cache.currentGeneration()
    const versions = game === undefined
      ? [await findNewestVersion(deps.db, lowerNamespace, lowerPackId)].filter((v) => v !== undefined)
      : await findCandidateVersions(deps.db, lowerNamespace, lowerPackId)
    const exists = versions.length > 0 || await publicPackExists(deps.db, lowerNamespace, lowerPackId)
    answer = answerFrom(exists ? versions : undefined, game, urls)
    cache.set(key, origin, answer, generation, variant)
  } else {
    cache.counts.hits++
  }
  if (answer === null) throw new NotFound('pack not found')
  if (answer.noVersion) throw new NotFound(answer.body)
  return answer
}

/** The most ids one batch may ask about (up to 200). */
export const MAX_BATCH = 200

/** The batch's body as sent, and its ETag. */
export interface BatchAnswer {
  body: string
  etag: string
}

/**
 * POST /api/update-check/: for each `namespace:pack_id` (as the client spelt
 * it, each once, in its order), the single check's 200 body, or null where it
 * would say 404 (answersFor).
 */
export async function updateCheckBatch(
  deps: UpdateCheckDeps,
  ids: readonly string[],
  origin: string,
  urls: FileUrls,
  game?: GameQuery,
): Promise<BatchAnswer> {
  // The client's spelling -> the pack's key; ids that differ only in case share one answer.
  const asked = new Map<string, string>()
  for (const id of ids) if (!asked.has(id)) asked.set(id, id.toLowerCase())
  const answers = await answersFor(deps, [...asked.values()], origin, urls, game)
  // The cached bodies are spliced in as they are: the batch holds exactly the bytes the single check sends.
  const parts: string[] = []
  for (const [id, key] of asked) {
    parts.push(`${JSON.stringify(id)}:${answerJson(answers.get(key))}`)
  }
  const body = `{"packs":{${parts.join(',')}}}`
  return { body, etag: etagOf(body) }
}

/**
 * The answers for several packs (lower-case keys "namespace:pack_id"), as the
 * single check would give them: from the cache, the misses read in one query
 * (findVersionsOfPacks) and cached. With Redis, every pack's stamp is checked
 * in one round trip first.
 */
export async function answersFor(
  deps: UpdateCheckDeps,
  keys: readonly string[],
  origin: string,
  urls: FileUrls,
  game: GameQuery | undefined,
): Promise<Map<string, UpdateCheckAnswer>> {
  assertKnownRelease(game)
  const variant = variantOf(game)
  const cache = deps.updateCheckCache
  const unique = [...new Set(keys)]
  const asking = cache.revalidateMany?.(unique)
  if (asking !== undefined) await asking
  const answers = new Map<string, UpdateCheckAnswer>()
  const misses: PackKey[] = []
  for (const key of unique) {
    const cached = cache.get(key, origin, variant)
    if (cached !== undefined) answers.set(key, cached)
    else misses.push(splitKey(key))
  }
  cache.counts.hits += answers.size
  cache.counts.misses += misses.length
  if (misses.length > 0) {
    const generation = cache.currentGeneration()
    const found = await findVersionsOfPacks(deps.db, misses, game === undefined ? 1 : MAX_CANDIDATES)
    for (const miss of misses) {
      const key = packKey(miss.namespace, miss.packId)
      const answer = answerFrom(found.get(key), game, urls)
      cache.set(key, origin, answer, generation, variant)
      answers.set(key, answer)
    }
  }
  return answers
}

/** The JSON an answer puts in a batch or a by-hash match: the single check's 200 body, or null. */
export function answerJson(answer: UpdateCheckAnswer | undefined): string {
  return answer == null || answer.noVersion ? 'null' : answer.body
}

/** A release the table does not know cannot be matched: said before any lookup (and never cached: the name is the client's). */
function assertKnownRelease(game: GameQuery | undefined): void {
  if (game !== undefined && 'release' in game && !isKnownRelease(game.release)) {
    throw new NotFound(`unknown Minecraft release "${game.release}": this site knows releases up to ${newestKnownRelease()}`)
  }
}

/** The cache's name for a compatibility query; '' for the plain update-check. */
function variantOf(game: GameQuery | undefined): string {
  return game === undefined ? '' : 'release' in game ? `r:${game.release}` : `f:${game.packFormat}`
}

/** "namespace:pack_id" (lower case, one colon: the schemas allow no other) into its parts. */
function splitKey(key: string): PackKey {
  const colon = key.indexOf(':')
  return { namespace: key.slice(0, colon), packId: key.slice(colon + 1) }
}

/**
 * The answer from a pack's versions (newest first; undefined when no public
 * pack has that id): the newest that fits the game, or the 404 that says why none does.
 */
function answerFrom(versions: readonly CandidateVersion[] | undefined, game: GameQuery | undefined, urls: FileUrls): UpdateCheckAnswer {
  if (versions === undefined) return null
  const newest = game === undefined ? versions[0] : versions.find((v) => supports(v.declaration, v.packFormat, game))
  if (newest === undefined) return { body: noVersionDetail(game), etag: '', noVersion: true }
  return withEtag(JSON.stringify(toPackLatest(newest, urls)))
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
  return { body, etag: etagOf(body) }
}

export function etagOf(body: string): string {
  return `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"`
}
