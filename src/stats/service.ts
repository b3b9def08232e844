// The staff statistics snapshot (SPEC: GET /api/stats/): process, event loop,
// per-route request metrics and database counts, built at most once per cache
// window because the counts scan whole tables.
import fs from 'node:fs'
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'
import type { Db } from '../db/index.js'
import { countRows } from './repository.js'
import { storedBytes } from '../files/repository.js'
import { countPendingUploads } from '../uploads/repository.js'
import { nowIso } from '../db/time.js'
import type { RouteMetrics, RouteSummary } from './metrics.js'

/** package.json's version, read once: it cannot change while the process runs. */
export const PACKAGE_VERSION: string = (
  JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version

export interface EventLoopDelay {
  p50_ms: number
  p99_ms: number
  max_ms: number
}

export interface StatsSnapshot {
  generated_at: string
  cache_seconds: number
  version: string
  node_version: string
  uptime_seconds: number
  process: {
    pid: number
    memory: { rss: number; heap_used: number; heap_total: number; external: number }
    cpu: { user_ms: number; system_ms: number }
  }
  event_loop: { delay: EventLoopDelay }
  requests: { total: number; routes: RouteSummary[] }
  counts: { users: number; packs: number; versions: number; pending_uploads: number; drafts: number; api_tokens: number }
  storage: { files: number; bytes: number }
}

const EVENT_LOOP_RESOLUTION_MS = 10

/**
 * Event-loop delay, sampled every 10 ms by Node's histogram. Each read covers
 * the time since the previous read (or since start), so a snapshot describes
 * recent load rather than the whole uptime.
 */
export class EventLoopMonitor {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS })

  constructor() {
    this.histogram.enable()
  }

  read(): EventLoopDelay {
    const h = this.histogram
    // The histogram records whole timer intervals (about the resolution when
    // the loop is idle); the delay is what exceeds the interval.
    const delay = (ns: number) => h.count === 0 ? 0 : round(Math.max(0, ns / 1e6 - EVENT_LOOP_RESOLUTION_MS))
    const result = { p50_ms: delay(h.percentile(50)), p99_ms: delay(h.percentile(99)), max_ms: delay(h.max) }
    h.reset()
    return result
  }

  stop(): void {
    this.histogram.disable()
  }
}

export interface StatsSources {
  db: Db
  metrics: RouteMetrics
  eventLoop: EventLoopMonitor
  cacheMs: number
}

export async function buildSnapshot(sources: StatsSources, now: number = Date.now()): Promise<StatsSnapshot> {
  const [rows, pendingUploads, storage] = await Promise.all([
    countRows(sources.db, nowIso(now)),
    countPendingUploads(sources.db),
    storedBytes(sources.db),
  ])
  const memory = process.memoryUsage()
  const cpu = process.cpuUsage()
  return {
    generated_at: nowIso(now),
    cache_seconds: sources.cacheMs / 1000,
    version: PACKAGE_VERSION,
    node_version: process.version,
    uptime_seconds: round(process.uptime()),
    process: {
      pid: process.pid,
      memory: { rss: memory.rss, heap_used: memory.heapUsed, heap_total: memory.heapTotal, external: memory.external },
      cpu: { user_ms: round(cpu.user / 1000), system_ms: round(cpu.system / 1000) },
    },
    event_loop: { delay: sources.eventLoop.read() },
    requests: { total: sources.metrics.total, routes: sources.metrics.summary() },
    counts: {
      users: rows.users,
      packs: rows.packs,
      versions: rows.versions,
      pending_uploads: pendingUploads,
      drafts: rows.drafts,
      api_tokens: rows.api_tokens,
    },
    storage,
  }
}

/**
 * Where the snapshot is kept between builds. In-process here; with several
 * instances behind REDIS_URL, RedisSnapshotCache (redis-snapshot-cache.ts)
 * shares one snapshot between them.
 */
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

const round = (value: number) => Math.round(value * 1000) / 1000
