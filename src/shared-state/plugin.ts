// The 'shared-state' plugin: the one place that decides where what instances
// must share lives. Without REDIS_URL that is this process's memory; with it,
// Redis, so every instance counts the same failed password attempts, drops the
// same stale update-check answers and serves the same statistics snapshot.
// The Redis client and its adapters are imported only when REDIS_URL is set.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { MemoryAttemptLimiter, type AttemptKind, type AttemptLimiter } from '../auth/limiter.js'
import { MemoryUpdateCheckCache, type UpdateCheckCache, type UpdateCheckCacheLimits } from '../update-check/cache.js'
import type { StatsSnapshotBody } from '../api/stats.js'
import { MemorySnapshotCache, type SnapshotCache } from '../stats/cache.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Failed-password counts per client: the gate password's, account passwords' (sign-in, password change) and feed tokens' apart. */
    attemptLimiters: Record<AttemptKind, AttemptLimiter>
    /** The update-check's answers (src/update-check/cache.ts), in this process or kept in step through Redis. */
    updateCheckCache: UpdateCheckCache
    /** Where the statistics snapshot is kept between builds: this process, or Redis. */
    statsSnapshotCache: SnapshotCache<StatsSnapshotBody>
    /** Whether an error means the shared state (Redis) cannot answer now: a 503, not a 500. Always false without REDIS_URL. */
    sharedStateUnavailable(error: unknown): boolean
    /** With REDIS_URL, one PING (the readiness check, /metrics): rejects when Redis does not answer. Null without. */
    sharedStatePing: (() => Promise<void>) | null
  }
}

interface SharedState {
  /** Failed-password counts per client, gate and account passwords and feed tokens apart: guessing one never locks anyone out of another. */
  attemptLimiters: Record<AttemptKind, AttemptLimiter>
  updateCheckCache: UpdateCheckCache
  statsSnapshotCache: SnapshotCache<StatsSnapshotBody>
  /** Whether an error means the shared store cannot answer now (a 503, see src/http/errors.ts). */
  unavailable(error: unknown): boolean
  /** One round trip to the shared store; null when it is this process's memory. */
  ping: (() => Promise<void>) | null
  close(): Promise<void>
}

export interface SharedStateOptions {
  /** The update-check cache's bounds (DEFAULT_LIMITS by default; BuildOptions.updateCheckLimits). */
  updateCheckLimits?: Partial<UpdateCheckCacheLimits>
}

export default fp<SharedStateOptions>(async (app, options) => {
  const { config } = app
  const limits = options.updateCheckLimits ?? {}
  const shared = config.redisUrl ? await inRedis(app, config.redisUrl, limits) : inMemory(app, limits)
  app.decorate('attemptLimiters', shared.attemptLimiters)
  app.decorate('updateCheckCache', shared.updateCheckCache)
  app.decorate('statsSnapshotCache', shared.statsSnapshotCache)
  app.decorate('sharedStateUnavailable', shared.unavailable)
  app.decorate('sharedStatePing', shared.ping)
  app.addHook('onClose', () => shared.close())
}, { name: 'shared-state', decorators: { fastify: ['config', 'clock'] } })

function inMemory(app: FastifyInstance, updateCheckLimits: Partial<UpdateCheckCacheLimits>): SharedState {
  const { config } = app
  const limiter = () => new MemoryAttemptLimiter(config.authFailureLimit, config.authFailureWindowMs)
  return {
    attemptLimiters: { gate: limiter(), login: limiter(), feed: limiter() },
    updateCheckCache: new MemoryUpdateCheckCache(updateCheckLimits),
    statsSnapshotCache: new MemorySnapshotCache<StatsSnapshotBody>(config.statsCacheMs, app.clock),
    unavailable: () => false,
    ping: null,
    close: async () => {},
  }
}

async function inRedis(app: FastifyInstance, url: string, updateCheckLimits: Partial<UpdateCheckCacheLimits>): Promise<SharedState> {
  const { config } = app
  const [{ openRedis, redisUnavailable }, { RedisAttemptLimiter }, { RedisUpdateCheckCache }, { RedisSnapshotCache }, { RedisFeed }] = await Promise.all([
    import('./redis.js'),
    import('./redis-limiter.js'),
    import('./redis-update-check-cache.js'),
    import('./redis-snapshot-cache.js'),
    import('./redis-feed.js'),
  ])
  // An unreachable or malformed REDIS_URL fails here, before the app listens (a ConfigError line).
  const redis = await openRedis(url)
  redis.onError = (error) => app.log.warn({ err: error }, 'redis connection error; retrying')
  // What instances push to each other (changed packs, failed passwords): on its own connection.
  let feed: Awaited<ReturnType<typeof RedisFeed.open>>
  try {
    feed = await RedisFeed.open(redis.client, (error) => app.log.warn({ err: error }, 'redis connection (invalidation feed) error; retrying'))
  } catch (error) {
    await redis.close()
    throw error
  }
  const limiter = (kind: AttemptKind) => new RedisAttemptLimiter(redis.client, kind, config.authFailureLimit, config.authFailureWindowMs, feed)
  const updateCheckCache = new RedisUpdateCheckCache(redis.client, updateCheckLimits, feed)
  updateCheckCache.onWriteFailure = (error) => app.log.error({ err: error }, 'could not tell other instances about a new version yet; retried when Redis is back')
  return {
    attemptLimiters: { gate: limiter('gate'), login: limiter('login'), feed: limiter('feed') },
    updateCheckCache,
    statsSnapshotCache: new RedisSnapshotCache<StatsSnapshotBody>(redis.client, config.statsCacheMs, 'stats', app.clock),
    unavailable: redisUnavailable,
    // The command connection's own PING: it fails at once while that connection is down (no offline queue).
    ping: async () => { await redis.client.ping() },
    close: async () => {
      await feed.close()
      await redis.close()
    },
  }
}
