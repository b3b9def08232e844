// By hash: an updater that finds an archive on disk asks
// which pack and version it is, and what the newest version for its game is.
// The match comes from one indexed query; `latest` is the update-check's own
// answer for that pack (its cache, its bytes), so the two never disagree.
import { NotFound } from '../errors.js'
import type { GameQuery } from '../minecraft/releases.js'
import type { FileUrls } from '../http/urls.js'
import { packKey } from './cache.js'
import { findVersionsByHash, type HashVersionRecord } from './by-hash-repository.js'
import { toHashVersion } from './mapper.js'
import { answerJson, answersFor, etagOf, type BatchAnswer, type UpdateCheckDeps } from './service.js'

/** A hash as asked (any case), and which algorithm its length names. */
function parseHash(hash: string): { hex: string; algorithm: 'sha1' | 'sha256' } {
  // The route's schema allows exactly 40 or 64 hex digits.
  return { hex: hash.toLowerCase(), algorithm: hash.length === 40 ? 'sha1' : 'sha256' }
}

/**
 * Each hash (as sent, each once, in order) with its match's JSON, or null:
 * one query for the matches, then the update-check's answers for their packs
 * (cache first, the misses in one more query).
 */
async function lookUp(deps: UpdateCheckDeps, hashes: readonly string[], origin: string, urls: FileUrls, game: GameQuery | undefined): Promise<Map<string, string | null>> {
  const asked = new Map<string, { hex: string; algorithm: 'sha1' | 'sha256' }>()
  for (const hash of hashes) if (!asked.has(hash)) asked.set(hash, parseHash(hash))
  const sha1s = new Set<string>()
  const sha256s = new Set<string>()
  for (const { hex, algorithm } of asked.values()) (algorithm === 'sha1' ? sha1s : sha256s).add(hex)
  const records = await findVersionsByHash(deps.db, [...sha1s], [...sha256s])
  const bySha256 = new Map<string, HashVersionRecord>()
  const bySha1 = new Map<string, HashVersionRecord>()
  // Oldest first, and the first one kept: should two archives ever share a SHA-1 (a collision; new ones are
  // refused at publish), a lookup by SHA-1 keeps naming the one published first.
  for (const record of [...records].sort((a, b) => a.createdAt.localeCompare(b.createdAt))) {
    bySha256.set(record.sha256, record)
    if (record.sha1 !== null && !bySha1.has(record.sha1)) bySha1.set(record.sha1, record)
  }
  const answers = await answersFor(deps, records.map((r) => packKey(r.namespace, r.packId)), origin, urls, game)
  const out = new Map<string, string | null>()
  for (const [hash, { hex, algorithm }] of asked) {
    const record = (algorithm === 'sha1' ? bySha1 : bySha256).get(hex)
    if (record === undefined) {
      out.set(hash, null)
      continue
    }
    const head = JSON.stringify({ hash: hex, algorithm, namespace: record.namespace, pack_id: record.packId, version: toHashVersion(record, urls) })
    // The update-check's own bytes are spliced in, as the batch does.
    out.set(hash, `${head.slice(0, -1)},"latest":${answerJson(answers.get(packKey(record.namespace, record.packId)))}}`)
  }
  return out
}

/** GET /api/update-check/by-hash/{hash}: the match, or NotFound. */
export async function lookUpHash(deps: UpdateCheckDeps, hash: string, origin: string, urls: FileUrls, game?: GameQuery): Promise<BatchAnswer> {
  const body = (await lookUp(deps, [hash], origin, urls, game)).get(hash)
  if (body == null) throw new NotFound(`no public version of any pack has an archive with ${parseHash(hash).algorithm} ${parseHash(hash).hex}`)
  return { body, etag: etagOf(body) }
}

/** POST /api/update-check/by-hash/: each hash's match, or null. */
export async function lookUpHashes(deps: UpdateCheckDeps, hashes: readonly string[], origin: string, urls: FileUrls, game?: GameQuery): Promise<BatchAnswer> {
  const found = await lookUp(deps, hashes, origin, urls, game)
  const body = `{"hashes":{${[...found].map(([hash, match]) => `${JSON.stringify(hash)}:${match ?? 'null'}`).join(',')}}}`
  return { body, etag: etagOf(body) }
}
