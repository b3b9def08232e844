// The update-check cache when instances share Redis (REDIS_URL). Answers stay
// in each process (MemoryUpdateCheckCache: no body crosses the network).
// Every change writes a new stamp for its pack in Redis and publishes the
// pack's key (./redis-feed.ts); the other instances drop their answers for it
// when the message arrives, a few milliseconds later. While the feed is live
// an update-check asks Redis nothing: the same speed as one instance alone.
//
// When the feed is not live (its connection dropped, or stopped answering its
// PING for LIVE_MS), every update-check reads its pack's stamp instead (HGET:
// one small round trip) and drops the local answer when the stamp is not the
// one it was cached under, as before the feed existed; when the feed is back,
// every local answer is dropped (messages may have been missed) and the
// round trips stop. So a publish reaches every instance within the feed's
// delivery time (milliseconds), and never later than LIVE_MS.
//
// Stamps are random, not counters: a Redis restarted without its data must not
// hand out a value an instance has already seen for an older answer.
import { randomUUID } from 'node:crypto'
import { KEY_PREFIX, type RedisClient } from './redis.js'
import { channelOf, databaseOf, eventMessage, type RedisFeed } from './redis-feed.js'
import { MemoryUpdateCheckCache, type CacheCounts, type CacheUsage, type UpdateCheckAnswer, type UpdateCheckCacheLimits, type UpdateCheckCache } from '../update-check/cache.js'

// The key keeps the name it had before the update-check had its own module: instances of the older
// release share it while a rolling upgrade runs.
const STAMPS = `${KEY_PREFIX}latest:stamps`
/** A pack no instance has changed yet has no stamp; it compares as this. */
const NO_STAMP = ''
/** The feed's message type for a changed pack; its payload is the pack's key. */
const CHANGED = 'latest'

export class RedisUpdateCheckCache implements UpdateCheckCache {
  private readonly local: MemoryUpdateCheckCache
  readonly limits: Readonly<UpdateCheckCacheLimits>
  readonly counts: CacheCounts
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

  /**
   * `feed` absent (the admin CLI, which answers no update-check; tests of the stamps): every revalidation
   * reads the stamp, and changes are still published for the servers.
   */
  constructor(private readonly redis: RedisClient, limits: Partial<UpdateCheckCacheLimits> = {}, private readonly feed?: RedisFeed) {
    this.local = new MemoryUpdateCheckCache(limits)
    this.limits = this.local.limits
    this.counts = this.local.counts
    redis.on('ready', () => { void this.writeUnwritten() })
    feed?.on(CHANGED, (packKey) => this.local.invalidate(packKey))
    feed?.onResync(() => {
      this.local.invalidateAll()
      this.seen.clear()
    })
  }

  currentWithoutAsking(): boolean {
    return this.feed?.live() === true
  }

  /** The stamp for instances whose feed is down, the message for the others: sent together (one round trip). */
  private announce(packKey: string): Promise<unknown> {
    const message = this.feed ? this.feed.publish(CHANGED, packKey) : this.redis.publish(channelOf(databaseOf(this.redis)), eventMessage('cli', CHANGED, packKey))
    return Promise.all([this.redis.hSet(STAMPS, packKey, randomUUID()), message])
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
      await this.announce(packKey)
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
        await this.announce(packKey)
        this.unwritten.delete(packKey)
      } catch {
        return // the connection dropped again; the next 'ready' retries
      }
    }
  }

  /** Nothing to ask while the feed is live; else the pack's stamp. */
  readonly revalidate = (packKey: string): Promise<void> | undefined => {
    if (this.feed?.live()) return undefined
    return this.redis.hGet(STAMPS, packKey).then((stamp) => this.compare(packKey, stamp ?? NO_STAMP))
  }

  /** The batch's packs: nothing while the feed is live, else every stamp in one HMGET. */
  readonly revalidateMany = (packKeys: readonly string[]): Promise<void> | undefined => {
    if (packKeys.length === 0 || this.feed?.live()) return undefined
    return this.redis.hmGet(STAMPS, [...packKeys]).then((stamps) => packKeys.forEach((packKey, i) => this.compare(packKey, stamps[i] ?? NO_STAMP)))
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

  usage(): CacheUsage & { stamps: number; resyncs: number } {
    return { ...this.local.usage(), stamps: this.seen.size, resyncs: this.feed?.resyncs ?? 0 }
  }
}
