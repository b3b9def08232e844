// The statistics snapshot shared through Redis (REDIS_URL): whichever instance
// is asked first in a window builds it and stores it for the window; every
// instance answers with that same snapshot (same generated_at) until it expires.
//
// What a shared snapshot describes: the database counts and storage figures
// are the site's; process, uptime, event_loop and requests (per-route metrics
// are kept per process) are those of the instance that built it — its pid is
// in process.pid. A site-wide request total would need every instance's
// metrics in Redis on every request, which the update-check cannot afford.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { KEY_PREFIX, type RedisClient } from './redis.js'
import type { SnapshotCache } from '../stats/cache.js'

/** Longest a build may hold the lock; the counts scan whole tables, so this is generous. */
const LOCK_MS = 10_000
const POLL_MS = 25

/** Deletes the lock only if it is still ours (a build that outlived LOCK_MS must not free someone else's). */
const UNLOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`

/**
 * One build per window across instances: the first to miss takes a short lock
 * (SET NX PX) and builds; the others poll for the stored snapshot rather than
 * scanning the tables too. Should the builder die, the lock expires and a
 * waiter builds after LOCK_MS instead of failing.
 */
export class RedisSnapshotCache<T> implements SnapshotCache<T> {
  private building: Promise<T> | undefined
  private readonly key: string
  private readonly lockKey: string

  constructor(
    private readonly redis: RedisClient,
    private readonly ttlMs: number,
    name = 'stats',
    /** Where a build's window starts and how long it took (tests pass their own clock). */
    private readonly clock: () => number = Date.now,
  ) {
    this.key = `${KEY_PREFIX}${name}:snapshot`
    this.lockKey = `${KEY_PREFIX}${name}:building`
  }

  get(build: () => Promise<T>): Promise<T> {
    // Requests in this process that miss together share one trip (as MemorySnapshotCache does).
    this.building ??= this.fetch(build).finally(() => {
      this.building = undefined
    })
    return this.building
  }

  private async fetch(build: () => Promise<T>): Promise<T> {
    const cached = await this.read()
    if (cached !== undefined) return cached
    const token = randomUUID()
    const locked = await this.redis.set(this.lockKey, token, { condition: 'NX', expiration: { type: 'PX', value: LOCK_MS } })
    if (locked !== null) {
      try {
        return await this.buildAndStore(build)
      } finally {
        await this.redis.eval(UNLOCK, { keys: [this.lockKey], arguments: [token] })
      }
    }
    // Another instance is building: wait for its snapshot.
    const deadline = Date.now() + LOCK_MS
    while (Date.now() < deadline) {
      await sleep(POLL_MS)
      // The lock is checked before the read: the builder stores before it unlocks.
      const lockHeld = (await this.redis.exists(this.lockKey)) === 1
      const value = await this.read()
      if (value !== undefined) return value
      if (!lockHeld) break
    }
    // The builder gave up or died: build here rather than answer nothing.
    return this.buildAndStore(build)
  }

  private async buildAndStore(build: () => Promise<T>): Promise<T> {
    // The window starts when the data is read, so a snapshot is never older than ttlMs.
    const startedAt = this.clock()
    const value = await build()
    const remaining = startedAt + this.ttlMs - this.clock()
    if (remaining > 0) await this.redis.set(this.key, JSON.stringify(value), { expiration: { type: 'PX', value: remaining } })
    return value
  }

  private async read(): Promise<T | undefined> {
    const raw = await this.redis.get(this.key)
    return raw === null ? undefined : (JSON.parse(raw) as T)
  }
}
