// The update-check's answers, kept serialised in memory. Every player's game
// asks on every start, and the answer changes only when its pack gets a new
// version, so the answer is computed once and dropped the moment a publish
// or a new version changes it.

/** The JSON body exactly as sent and its ETag; null when no such pack exists. */
export type LatestAnswer = { body: string; etag: string } | null

const MAX_PACKS = 10_000
/** The Host header is the client's to choose; a few origins per pack are real (LAN name, public name), more are not kept. */
const MAX_ORIGINS_PER_PACK = 8

/**
 * What the update-check route uses: LatestCache alone, or RedisLatestCache
 * (src/domain/redis-latest-cache.ts) when instances share a Redis.
 */
export interface UpdateCheckCache {
  get(packKey: string, origin: string): LatestAnswer | undefined
  currentGeneration(): number
  set(packKey: string, origin: string, answer: LatestAnswer, readAtGeneration: number): void
  /** Drops the pack's answers; when shared, every instance's are dropped before the promise resolves. */
  invalidate(packKey: string): void | Promise<void>
  /**
   * Only when shared: call before `get`, so an answer cached before another
   * instance changed the pack is dropped. Absent in-process, so the
   * single-instance path stays synchronous.
   */
  readonly revalidate?: (packKey: string) => Promise<void>
}

export class LatestCache implements UpdateCheckCache {
  /** namespace:pack_id -> origin -> answer (download_url is absolute, so it depends on the origin asked). */
  private readonly answers = new Map<string, Map<string, LatestAnswer>>()
  /** Bumped by every invalidation, so a lookup that raced a publish does not store what it read before it. */
  private generation = 0

  get(packKey: string, origin: string): LatestAnswer | undefined {
    return this.answers.get(packKey)?.get(origin)
  }

  /** Call before reading the database; pass the result to `set`. */
  currentGeneration(): number {
    return this.generation
  }

  set(packKey: string, origin: string, answer: LatestAnswer, readAtGeneration: number): void {
    if (readAtGeneration !== this.generation) return
    let byOrigin = this.answers.get(packKey)
    if (!byOrigin) {
      // Unknown pack ids are cached too (an uninstalled pack's mod keeps asking), so the map is bounded.
      if (this.answers.size >= MAX_PACKS) this.answers.delete(this.answers.keys().next().value!)
      byOrigin = new Map()
      this.answers.set(packKey, byOrigin)
    }
    if (byOrigin.size < MAX_ORIGINS_PER_PACK || byOrigin.has(origin)) byOrigin.set(origin, answer)
  }

  invalidate(packKey: string): void {
    this.generation += 1
    this.answers.delete(packKey)
  }
}

export function packKey(namespace: string, packId: string): string {
  return `${namespace}:${packId}`
}
