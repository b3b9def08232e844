// The update-check cache when instances share Redis (REDIS_URL). Answers stay
// in each process (MemoryUpdateCheckCache: no body crosses the network), and
// Redis holds one stamp per pack that every change replaces. Each update-check reads its
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
import { KEY_PREFIX, type RedisClient } from './redis.js'
import { MemoryUpdateCheckCache, type CacheUsage, type UpdateCheckAnswer, type UpdateCheckCacheLimits, type UpdateCheckCache } from '../update-check/cache.js'

// The key keeps the name it had before the update-check had its own module: instances of the older
// release share it while a rolling upgrade runs.
const STAMPS = `${KEY_PREFIX}latest:stamps`
/** A pack no instance has changed yet has no stamp; it compares as this. */
const NO_STAMP = ''

export class RedisUpdateCheckCache implements UpdateCheckCache {
  private readonly local: MemoryUpdateCheckCache
  readonly limits: Readonly<UpdateCheckCacheLimits>
  /**
   * packKey -> the pack's stamp when this instance last checked it, oldest first; at most
   * limits.maxStamps of them, since the ids are the client's to invent.
   */
  private readonly seen = new Map<string, string>()

  /**
   * Packs whose new stamp could not be written (Redis was unreachable after
   * the change was committed). They are written again as soon as the
   * connection is back, so other instances stop serving the old answer.
   */
  private readonly unwritten = new Set<string>()

  constructor(private readonly redis: RedisClient, limits: Partial<UpdateCheckCacheLimits> = {}) {
    this.local = new MemoryUpdateCheckCache(limits)
    this.limits = this.local.limits
    redis.on('ready', () => { void this.writeUnwritten() })
  }

  get(packKey: string, origin: string, variant = ''): UpdateCheckAnswer | undefined {
    return this.local.get(packKey, origin, variant)
  }

  currentGeneration(): number {
    return this.local.currentGeneration()
  }

  set(packKey: string, origin: string, answer: UpdateCheckAnswer, readAtGeneration: number, variant = ''): void {
    this.local.set(packKey, origin, answer, readAtGeneration, variant)
  }

  /**
   * The change is already committed when this runs, so a Redis failure here
   * must not turn it into an error for the client (a retry would then be a
   * 409): the stamp is kept and written on reconnection. Meanwhile instances
   * that cannot reach Redis answer 503, not an old version.
   */
  async invalidate(packKey: string): Promise<void> {
    this.local.invalidate(packKey)
    try {
      await this.redis.hSet(STAMPS, packKey, randomUUID())
    } catch (error) {
      if (this.unwritten.size < this.limits.maxStamps) this.unwritten.add(packKey)
      this.onWriteFailure(error)
    }
  }

  /** Set by the app to log a stamp that could not be written yet. */
  onWriteFailure: (error: unknown) => void = () => {}

  private async writeUnwritten(): Promise<void> {
    for (const packKey of [...this.unwritten]) {
      try {
        await this.redis.hSet(STAMPS, packKey, randomUUID())
        this.unwritten.delete(packKey)
      } catch {
        return // the connection dropped again; the next 'ready' retries
      }
    }
  }

  readonly revalidate = async (packKey: string): Promise<void> => {
    this.compare(packKey, (await this.redis.hGet(STAMPS, packKey)) ?? NO_STAMP)
  }

  /** The batch's packs: every stamp in one HMGET. */
  readonly revalidateMany = async (packKeys: readonly string[]): Promise<void> => {
    if (packKeys.length === 0) return
    const stamps = await this.redis.hmGet(STAMPS, [...packKeys])
    packKeys.forEach((packKey, i) => this.compare(packKey, stamps[i] ?? NO_STAMP))
  }

  /** Drops the pack's local answers when its stamp is not the one they were cached under. */
  private compare(packKey: string, stamp: string): void {
    if (this.seen.get(packKey) === stamp) return
    // Also bumps the pack's generation, so a lookup that read the database
    // before this point does not store its answer afterwards.
    this.local.invalidate(packKey)
    this.seen.delete(packKey)
    this.seen.set(packKey, stamp)
    if (this.seen.size > this.limits.maxStamps) this.seen.delete(this.seen.keys().next().value!)
  }

  usage(): CacheUsage & { stamps: number } {
    return { ...this.local.usage(), stamps: this.seen.size }
  }
}
