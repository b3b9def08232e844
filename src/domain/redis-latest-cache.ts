// The update-check cache when instances share Redis (REDIS_URL). Answers stay
// in each process (LatestCache: no body crosses the network), and Redis holds
// one stamp per pack that every change replaces. Each update-check reads its
// pack's stamp (HGET: one small round trip, pipelined with the others under
// load) and drops the local answer when the stamp is not the one it was cached
// under. The publishing instance writes the new stamp before it answers, so
// the very next update-check on any instance sees the new version.
//
// Why not pub/sub alone: a message is delivered to the other instances after
// the publisher's PUBLISH returns, so an update-check arriving there in the
// meantime would still get the old version; the issue asks for "at once".
// With the stamp read on every request, pub/sub would add nothing.
//
// Stamps are random, not counters: a Redis restarted without its data must not
// hand out a value an instance has already seen for an older answer.
import { randomUUID } from 'node:crypto'
import { KEY_PREFIX, type RedisClient } from '../redis.js'
import { LatestCache, type LatestAnswer, type UpdateCheckCache } from './latest-cache.js'

const STAMPS = `${KEY_PREFIX}latest:stamps`
/** Same bound as LatestCache's answers: past it the memory of seen stamps starts over (answers are then re-read). */
const MAX_PACKS = 10_000
/** A pack no instance has changed yet has no stamp; it compares as this. */
const NO_STAMP = ''

export class RedisLatestCache implements UpdateCheckCache {
  private readonly local = new LatestCache()
  /** packKey -> the pack's stamp when this instance last checked it. */
  private readonly seen = new Map<string, string>()

  constructor(private readonly redis: RedisClient) {}

  get(packKey: string, origin: string): LatestAnswer | undefined {
    return this.local.get(packKey, origin)
  }

  currentGeneration(): number {
    return this.local.currentGeneration()
  }

  set(packKey: string, origin: string, answer: LatestAnswer, readAtGeneration: number): void {
    this.local.set(packKey, origin, answer, readAtGeneration)
  }

  async invalidate(packKey: string): Promise<void> {
    this.local.invalidate(packKey)
    await this.redis.hSet(STAMPS, packKey, randomUUID())
  }

  readonly revalidate = async (packKey: string): Promise<void> => {
    const stamp = (await this.redis.hGet(STAMPS, packKey)) ?? NO_STAMP
    if (this.seen.get(packKey) === stamp) return
    // Also bumps the local generation, so a lookup that read the database
    // before this point does not store its answer afterwards.
    this.local.invalidate(packKey)
    if (this.seen.size >= MAX_PACKS && !this.seen.has(packKey)) this.seen.clear()
    this.seen.set(packKey, stamp)
  }
}
