// The update-check's answers, kept serialised in memory. Every player's game
// asks on every start, and the answer changes only when its pack gets a new
// version, so the answer is computed once and dropped the moment a publish
// or a new version changes it.
//
// Everything a request chooses is bounded (80,000 Host
// values once held 1.15 GB here). download_url is absolute, so an answer
// depends on the origin asked; answers are cached for a short allow-list of
// origins (PACKS_BASE_URL alone when set, else the first few seen, which are
// the site's real names) and computed afresh for any other. Found packs are
// bounded by count and by bytes; "not found" answers, whose pack ids are the
// client's to invent, are kept apart under their own bound, so a flood of
// invented ids never evicts a real pack's answer.
import type { Signable } from '../signing/service.js'

/**
 * The JSON body exactly as sent and its ETag; null when no such pack exists
 * (or it is hidden). `noVersion` marks a pack that exists with no version to
 * offer (every one yanked or deleted): a 404 whose detail is `body`.
 */
export type UpdateCheckAnswer = {
  body: string
  etag: string
  noVersion?: true
  /** The Packs-Signature header for `body`, and the key that made it: signed on first send, again after a rotation. */
  signature?: string
  signedBy?: string
  /** The body's Content-Digest, and its RFC 9421 signature for the last request line (src/signing/service.ts). */
  digest?: string
  message?: Signable['message']
  /** The fast path's header fields for a 200 and a 304, built on first use; `fieldsFor` is the signature they hold. */
  fields?: string[]
  notModifiedFields?: string[]
  fieldsFor?: string
} | null

export interface UpdateCheckCacheLimits {
  /** Packs with at least one cached answer. */
  maxPacks: number
  /** Cached "not found" answers. */
  maxMissing: number
  /** Estimated bytes of everything kept: keys, bodies, ETags. */
  maxBytes: number
  /** Origins answers are cached for; the first ones seen claim the places. */
  maxOrigins: number
  /** Packs whose last invalidation is remembered exactly (older ones share one watermark). */
  maxChanges: number
  /**
   * Compatibility variants (?pack_format=, ?game_version=) cached per pack beside the plain answer; past it
   * the oldest variant goes. The values are the client's to choose, so they are bounded per pack.
   */
  maxVariants: number
  /**
   * With REDIS_URL only (src/shared-state/redis-update-check-cache.ts): packs whose stamp an
   * instance remembers; past it the oldest is forgotten (that pack's answer is read again once).
   */
  maxStamps: number
}

export const DEFAULT_LIMITS: UpdateCheckCacheLimits = {
  maxPacks: 10_000,
  maxMissing: 10_000,
  maxBytes: 32 * 1024 * 1024,
  // 127.0.0.1:8000, localhost:8000, a LAN name and a public name.
  maxOrigins: 4,
  maxChanges: 4096,
  maxStamps: 10_000,
  maxVariants: 8,
}

/** What the cache holds now, for tests and the statistics. */
export interface CacheUsage {
  packs: number
  answers: number
  missing: number
  origins: number
  bytes: number
}

/**
 * How the lookups the update-check's service made went (./service.ts: the single check, the batch, by-hash),
 * since start, for GET /metrics. The fast path's answers are all hits and are counted apart (./fast-path.ts,
 * `served`), so this costs it nothing.
 */
export interface CacheCounts {
  /** An answer was cached: a version, or a "not found". */
  hits: number
  /** Nothing cached: the answer was read from the database. */
  misses: number
}

/**
 * What the update-check uses: MemoryUpdateCheckCache alone, or RedisUpdateCheckCache
 * (src/shared-state/redis-update-check-cache.ts) when instances share a Redis.
 */
export interface UpdateCheckCache {
  /** Counted by the service after each lookup; `get` itself counts nothing, since the fast path calls it too. */
  readonly counts: CacheCounts
  /** `variant` names a compatibility query ('' for the plain update-check): see variantKey in ./service.ts. */
  get(packKey: string, origin: string, variant?: string): UpdateCheckAnswer | undefined
  currentGeneration(): number
  set(packKey: string, origin: string, answer: UpdateCheckAnswer, readAtGeneration: number, variant?: string): void
  /** Drops the pack's answers; when shared, every instance's are dropped before the promise resolves. */
  invalidate(packKey: string): void | Promise<void>
  /**
   * Only when shared: call before `get`, so an answer cached before another
   * instance changed the pack is dropped. Absent in-process, so the
   * single-instance path stays synchronous; and with Redis it answers
   * undefined (nothing to wait for) while invalidations arrive by themselves.
   */
  readonly revalidate?: (packKey: string) => Promise<void> | undefined
  /** `revalidate` for many packs in one round trip (the batch update-check). */
  readonly revalidateMany?: (packKeys: readonly string[]) => Promise<void> | undefined
  /**
   * With `revalidate`: true while every change made through another instance is known to reach this one
   * without asking (src/shared-state/redis-update-check-cache.ts), so a cached answer may be sent as it is.
   */
  currentWithoutAsking?(): boolean
  usage(): CacheUsage
  /** The bounds in force: DEFAULT_LIMITS unless the app was built with others (BuildOptions.updateCheckLimits). */
  readonly limits: Readonly<UpdateCheckCacheLimits>
}

/** A found pack's answers, one place per allowed origin (same index as MemoryUpdateCheckCache.origins). */
interface PackAnswers {
  answers: (NonNullable<UpdateCheckAnswer> | undefined)[]
  /** Compatibility variants' answers, per origin place like `answers`; insertion order is age. */
  variants: Map<string, (NonNullable<UpdateCheckAnswer> | undefined)[]>
  bytes: number
}

/** Per-entry bookkeeping of a Map (hash slot, entry object), roughly; an estimate, not a measurement. */
export const ENTRY_OVERHEAD = 64
/**
 * The signatures an answer gets when first sent: Packs-Signature (about 110 characters), and the RFC 9421 fields
 * with the request line they were made for (Content-Digest, Signature-Input, Signature: about 400 characters).
 */
const SIGNATURE_ALLOWANCE = 640
/** The fast path's two header lists an answer gets when first sent (about 30 slots of 8 bytes, and the arrays). */
const FIELDS_ALLOWANCE = 320

/** What an answer costs the budget: counted when stored, with room for the signature it will carry. */
function answerCost(answer: NonNullable<UpdateCheckAnswer>): number {
  return answer.body.length + answer.etag.length + SIGNATURE_ALLOWANCE + FIELDS_ALLOWANCE + ENTRY_OVERHEAD
}

export class MemoryUpdateCheckCache implements UpdateCheckCache {
  readonly limits: Readonly<UpdateCheckCacheLimits>
  readonly counts: CacheCounts = { hits: 0, misses: 0 }
  /** Allowed origins, in the order they were first seen. */
  private readonly origins: string[] = []
  /** namespace:pack_id -> answers per origin; insertion order is age, the oldest goes first. */
  private readonly found = new Map<string, PackAnswers>()
  /** namespace:pack_id of packs that do not exist, oldest first. */
  private readonly missing = new Set<string>()
  private bytes = 0
  /**
   * Bumped by every invalidation, so a lookup that raced a publish does not
   * store what it read before it. Kept per pack: with Redis, an update-check
   * for an id this instance has not seen invalidates it, and a flood of
   * invented ids must not stop every other pack's answers from being stored.
   */
  private generation = 0
  /** namespace:pack_id -> generation of its last invalidation, oldest first. */
  private readonly changes = new Map<string, number>()
  /** The newest generation among invalidations no longer in `changes`. */
  private forgottenChanges = 0

  constructor(limits: Partial<UpdateCheckCacheLimits> = {}) {
    this.limits = Object.freeze({ ...DEFAULT_LIMITS, ...limits })
  }

  get(packKey: string, origin: string, variant = ''): UpdateCheckAnswer | undefined {
    const pack = this.found.get(packKey)
    if (pack !== undefined) {
      const place = this.origins.indexOf(origin)
      if (place === -1) return undefined
      return variant === '' ? pack.answers[place] : pack.variants.get(variant)?.[place]
    }
    // A pack that does not exist has no variant either.
    return this.missing.has(packKey) ? null : undefined
  }

  /** Call before reading the database; pass the result to `set`. */
  currentGeneration(): number {
    return this.generation
  }

  set(packKey: string, origin: string, answer: UpdateCheckAnswer, readAtGeneration: number, variant = ''): void {
    if ((this.changes.get(packKey) ?? this.forgottenChanges) > readAtGeneration) return
    // An unknown id is cached too (an uninstalled pack's mod keeps asking); it does not depend on the origin.
    if (answer === null) return this.setMissing(packKey)
    const place = this.originPlace(origin)
    if (place === -1) return
    const cost = answerCost(answer)
    // No single answer may take a large share of the budget (a real one is a few hundred bytes).
    if (cost > this.limits.maxBytes / 16) return
    if (this.missing.delete(packKey)) this.bytes -= packKey.length + ENTRY_OVERHEAD
    let pack = this.found.get(packKey)
    if (pack === undefined) {
      pack = { answers: this.emptyPlaces(), variants: new Map(), bytes: packKey.length + ENTRY_OVERHEAD }
      this.found.set(packKey, pack)
      this.bytes += pack.bytes
    }
    const places = variant === '' ? pack.answers : this.variantPlaces(pack, variant)
    const previous = places[place]
    if (previous !== undefined) {
      const previousCost = answerCost(previous)
      pack.bytes -= previousCost
      this.bytes -= previousCost
    }
    places[place] = answer
    pack.bytes += cost
    this.bytes += cost
    this.shrink(packKey)
  }

  private emptyPlaces(): (NonNullable<UpdateCheckAnswer> | undefined)[] {
    return new Array<NonNullable<UpdateCheckAnswer> | undefined>(this.limits.maxOrigins).fill(undefined)
  }

  /** The variant's places, made when new; the pack's oldest variant goes when there are too many. */
  private variantPlaces(pack: PackAnswers, variant: string): (NonNullable<UpdateCheckAnswer> | undefined)[] {
    let places = pack.variants.get(variant)
    if (places !== undefined) return places
    while (pack.variants.size >= this.limits.maxVariants) {
      const [oldest, answers] = pack.variants.entries().next().value!
      pack.variants.delete(oldest)
      const freed = oldest.length + ENTRY_OVERHEAD
        + answers.reduce((sum, a) => sum + (a === undefined ? 0 : answerCost(a)), 0)
      pack.bytes -= freed
      this.bytes -= freed
    }
    places = this.emptyPlaces()
    pack.variants.set(variant, places)
    pack.bytes += variant.length + ENTRY_OVERHEAD
    this.bytes += variant.length + ENTRY_OVERHEAD
    return places
  }

  invalidate(packKey: string): void {
    this.generation += 1
    this.changes.delete(packKey)
    this.changes.set(packKey, this.generation)
    if (this.changes.size > this.limits.maxChanges) {
      const [oldest, at] = this.changes.entries().next().value!
      this.changes.delete(oldest)
      this.forgottenChanges = at
    }
    this.drop(packKey)
  }

  /**
   * Drops every answer, and makes every lookup that read the database before
   * now too old to be stored: for when changes may have been missed (Redis's
   * invalidation feed was down, src/shared-state/redis-update-check-cache.ts).
   */
  invalidateAll(): void {
    this.generation += 1
    this.changes.clear()
    this.forgottenChanges = this.generation
    this.found.clear()
    this.missing.clear()
    this.bytes = 0
  }

  usage(): CacheUsage {
    let answers = 0
    for (const pack of this.found.values()) {
      for (const places of [pack.answers, ...pack.variants.values()]) for (const answer of places) if (answer !== undefined) answers += 1
    }
    return { packs: this.found.size, answers, missing: this.missing.size, origins: this.origins.length, bytes: this.bytes }
  }

  /** The origin's place in the allow-list, claiming a free one; -1 when the list is full without it. */
  private originPlace(origin: string): number {
    const place = this.origins.indexOf(origin)
    if (place !== -1 || this.origins.length >= this.limits.maxOrigins) return place
    this.origins.push(origin)
    this.bytes += origin.length + ENTRY_OVERHEAD
    return this.origins.length - 1
  }

  private setMissing(packKey: string): void {
    if (this.missing.has(packKey)) return
    this.drop(packKey)
    this.missing.add(packKey)
    this.bytes += packKey.length + ENTRY_OVERHEAD
    while (this.missing.size > this.limits.maxMissing) this.dropMissing(this.missing.values().next().value!)
    this.shrink(packKey)
  }

  /** Evicts the oldest entries until both bounds hold: invented ids first, then the oldest packs; never `keep`. */
  private shrink(keep: string): void {
    while (this.found.size > this.limits.maxPacks || this.bytes > this.limits.maxBytes) {
      if (this.bytes > this.limits.maxBytes && this.evictOldest(this.missing.keys(), keep)) continue
      if (!this.evictOldest(this.found.keys(), keep)) return
    }
  }

  private evictOldest(keys: IterableIterator<string>, keep: string): boolean {
    for (const key of keys) {
      if (key === keep) continue
      this.drop(key)
      return true
    }
    return false
  }

  private drop(packKey: string): void {
    const pack = this.found.get(packKey)
    if (pack !== undefined) {
      this.found.delete(packKey)
      this.bytes -= pack.bytes
    }
    this.dropMissing(packKey)
  }

  private dropMissing(packKey: string): void {
    if (this.missing.delete(packKey)) this.bytes -= packKey.length + ENTRY_OVERHEAD
  }
}

export function packKey(namespace: string, packId: string): string {
  return `${namespace}:${packId}`
}
