// The failed-attempt limiter in Redis (REDIS_URL), so a client guessing a
// password is counted the same whichever instance it reaches. Same rules as
// MemoryAttemptLimiter (src/auth/limiter.ts): a fixed window per client that
// starts at its first counted attempt; blocked once the count reaches
// maxFailures; attempts reserved before the check and refunded on success.
//
// One hash per client and kind, `packs:auth-failures:<kind>:<client>`, with
// fields n (failures plus attempts in flight) and w (the window's id, so a
// refund never lowers the count of a later window), and a PEXPIRE for the
// window. Every step is one Lua script: atomic across instances, one round trip.
import { randomBytes } from 'node:crypto'
import type { RedisClient } from './redis.js'
import type { RedisFeed } from './redis-feed.js'
import { KEY_PREFIX } from './redis.js'
import type { AttemptKind, AttemptLimiter, Refusal, Reservation } from '../auth/limiter.js'

/**
 * KEYS[1] the client's hash; ARGV: maxFailures, windowMs, count (1 or 0), a new window id.
 * Returns {0, ms left} when blocked (nothing counted), else {1, window id},
 * having added one to the count when ARGV[3] is 1. A counter without an expiry
 * (which would block for good) is given one.
 */
const ATTEMPT = `
local n = tonumber(redis.call('HGET', KEYS[1], 'n') or '0')
local ttl = redis.call('PTTL', KEYS[1])
if n >= tonumber(ARGV[1]) then
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    ttl = tonumber(ARGV[2])
  end
  return {0, ttl}
end
if ARGV[3] ~= '1' then return {1, ''} end
if ttl == -2 then
  redis.call('HSET', KEYS[1], 'n', 1, 'w', ARGV[4])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1, ARGV[4]}
end
redis.call('HINCRBY', KEYS[1], 'n', 1)
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return {1, redis.call('HGET', KEYS[1], 'w') or ''}`

/** KEYS[1] the client's hash; ARGV[1] the reservation's window id. Gives the reserved attempt back if that window still runs. */
const REFUND = `
if redis.call('HGET', KEYS[1], 'w') == ARGV[1] and tonumber(redis.call('HGET', KEYS[1], 'n') or '0') > 0 then
  redis.call('HINCRBY', KEYS[1], 'n', -1)
end
return 0`

/** The feed's message type for a counted attempt; its payload is "<kind> <client key>". */
const FAILED = 'fail'
/** Suspects kept in memory; past this, every right password asks Redis again until a window has passed. */
const MAX_SUSPECTS = 20_000

export class RedisAttemptLimiter implements AttemptLimiter {
  /**
   * Clients with an attempt counted in Redis (here, or by another instance through the feed), until their
   * window ends. Only they can be blocked, so only they need Redis to let a right password in
   * (blockedNow): everyone else's right password costs no round trip while the feed is live.
   */
  private readonly suspects = new Map<string, number>()
  /** Set while the suspects are being read from Redis (at start, after the feed was down), and when they overflowed. */
  private unknownUntil = Number.POSITIVE_INFINITY

  /** `feed` absent (tests of the counts alone): blockedNow never answers, and every check asks Redis. */
  constructor(
    private readonly redis: RedisClient,
    private readonly kind: AttemptKind,
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly feed?: RedisFeed,
  ) {
    if (!feed) return
    feed.on(FAILED, (payload) => {
      const space = payload.indexOf(' ')
      if (payload.slice(0, space) === kind) this.suspect(payload.slice(space + 1))
    })
    feed.onResync(() => void this.loadSuspects())
    void this.loadSuspects()
  }

  blockedNow(key: string): number | undefined {
    if (this.feed?.live() !== true || Date.now() < this.unknownUntil) return undefined
    const until = this.suspects.get(key)
    if (until === undefined) return 0
    if (until > Date.now()) return undefined
    this.suspects.delete(key)
    return 0
  }

  /** Marks `key` as having an attempt counted, here and on every instance. */
  private counted(key: string): Promise<unknown> {
    this.suspect(key)
    return this.feed ? this.feed.publish(FAILED, `${this.kind} ${key}`) : Promise.resolve()
  }

  private suspect(key: string): void {
    this.suspects.delete(key)
    this.suspects.set(key, Date.now() + this.windowMs)
    if (this.suspects.size <= MAX_SUSPECTS) return
    // Too many to keep: drop the expired ones; if that is not enough, ask Redis about everyone for a window.
    const now = Date.now()
    for (const [suspect, until] of this.suspects) if (until <= now) this.suspects.delete(suspect)
    if (this.suspects.size > MAX_SUSPECTS) {
      this.suspects.clear()
      this.unknownUntil = now + this.windowMs
    }
  }

  /** Every client with a count in Redis now: one SCAN over this kind's keys (bounded by the window's failures). */
  private async loadSuspects(): Promise<void> {
    this.unknownUntil = Number.POSITIVE_INFINITY
    const prefix = this.redisKey('')
    try {
      for await (const keys of this.redis.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
        for (const key of keys) this.suspect(key.slice(prefix.length))
      }
      if (this.unknownUntil === Number.POSITIVE_INFINITY) this.unknownUntil = 0
    } catch {
      // Redis went away meanwhile: the feed's next resync reads them again.
    }
  }

  async reserve(key: string): Promise<Reservation | Refusal> {
    const redisKey = this.redisKey(key)
    const [[allowed, value]] = await Promise.all([this.attempt(redisKey, true), this.counted(key)])
    if (!allowed) return { retryAfter: seconds(value) }
    let refunded = false
    return {
      retryAfter: 0,
      refund: async () => {
        if (refunded) return
        refunded = true
        await this.redis.eval(REFUND, { keys: [redisKey], arguments: [String(value)] })
      },
    }
  }

  async settle(key: string, succeeded: boolean): Promise<number> {
    // A failure is announced with its count, before the answer: every instance then asks Redis about this client.
    const [[allowed, value]] = await Promise.all([this.attempt(this.redisKey(key), !succeeded), succeeded ? undefined : this.counted(key)])
    return allowed ? 0 : seconds(value)
  }

  /** The key a client's count lives under (tests read it). */
  redisKey(key: string): string {
    return `${KEY_PREFIX}auth-failures:${this.kind}:${key}`
  }

  private async attempt(redisKey: string, count: boolean): Promise<[number, number | string]> {
    const reply = await this.redis.eval(ATTEMPT, {
      keys: [redisKey],
      arguments: [String(this.maxFailures), String(this.windowMs), count ? '1' : '0', count ? randomBytes(9).toString('base64url') : ''],
    }) as [number, number | string]
    return [Number(reply[0]), reply[1]]
  }
}

function seconds(ms: number | string): number {
  return Math.max(1, Math.ceil(Number(ms) / 1000))
}
