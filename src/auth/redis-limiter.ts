// The failed-attempt limiter in Redis (REDIS_URL), so an address guessing the
// password is counted the same whichever instance it reaches. Same rule as
// MemoryAttemptLimiter: a fixed window per address that starts at its first
// failure; the address is blocked once it has maxFailures in the window.
import type { RedisClient } from '../redis.js'
import { KEY_PREFIX } from '../redis.js'
import type { AttemptLimiter } from './limiter.js'

/**
 * INCR and the window's expiry in one atomic step: two instances counting the
 * first failure at once cannot leave a counter without an expiry (which would
 * block the address for good). A script rather than PEXPIRE ... NX, which
 * needs Redis 7.
 */
const RECORD = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 or redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return failures`

/** Milliseconds until the window ends when the address is blocked, else 0; one round trip. */
const BLOCKED_FOR = `
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
if failures < tonumber(ARGV[1]) then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return tonumber(ARGV[2]) end
return ttl`

export class RedisAttemptLimiter implements AttemptLimiter {
  constructor(
    private readonly redis: RedisClient,
    private readonly maxFailures: number,
    private readonly windowMs: number,
  ) {}

  async retryAfter(key: string): Promise<number> {
    const ms = Number(await this.redis.eval(BLOCKED_FOR, {
      keys: [redisKey(key)],
      arguments: [String(this.maxFailures), String(this.windowMs)],
    }))
    return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0
  }

  async recordFailure(key: string): Promise<void> {
    await this.redis.eval(RECORD, { keys: [redisKey(key)], arguments: [String(this.windowMs)] })
  }
}

function redisKey(address: string): string {
  return `${KEY_PREFIX}auth-failures:${address}`
}
