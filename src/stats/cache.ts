// Where the statistics snapshot is kept between builds: the counts scan whole
// tables, so a snapshot is built at most once per PACKS_STATS_CACHE window.
// In-process here; with several instances behind REDIS_URL, RedisSnapshotCache
// (src/shared-state/redis-snapshot-cache.ts) shares one snapshot between them.
// Which one a site uses is decided in src/shared-state/plugin.ts.

export interface SnapshotCache<T> {
  /** The cached value while it is fresh, else the result of `build` (which is then cached). */
  get(build: () => Promise<T>): Promise<T>
}

export class MemorySnapshotCache<T> implements SnapshotCache<T> {
  private cached: { value: T; expiresAt: number } | undefined
  private building: Promise<T> | undefined

  constructor(
    private readonly ttlMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  get(build: () => Promise<T>): Promise<T> {
    if (this.cached && this.clock() < this.cached.expiresAt) return Promise.resolve(this.cached.value)
    // Requests that miss while a build runs wait for that build instead of starting their own.
    this.building ??= (async () => {
      // The window starts when the data is read, so a snapshot is never older than ttlMs.
      const startedAt = this.clock()
      try {
        const value = await build()
        this.cached = { value, expiresAt: startedAt + this.ttlMs }
        return value
      } finally {
        this.building = undefined
      }
    })()
    return this.building
  }
}
