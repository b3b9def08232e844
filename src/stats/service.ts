// The staff statistics snapshot (GET /api/stats/): process, event loop,
// per-route request metrics and database counts. Built at most once per cache
// window (the 'metrics' plugin, src/stats/plugin.ts, keeps it in the site's
// snapshot cache) because the counts scan whole tables.
import fs from 'node:fs'
import path from 'node:path'
import type { StatsSnapshotBody } from '../api/stats.js'
import { PROJECT_ROOT } from '../config/paths.js'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { toStatsSnapshot } from './mapper.js'
import type { EventLoopMonitor, RouteMetrics } from './metrics.js'
import { countRows, storedBytes } from './repository.js'

/** package.json's version, read once: it cannot change while the process runs. */
export const PACKAGE_VERSION: string = (
  JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string }
).version

export interface StatsSources {
  db: Db
  metrics: RouteMetrics
  eventLoop: EventLoopMonitor
  cacheMs: number
}

export async function buildSnapshot(sources: StatsSources, now: number = Date.now()): Promise<StatsSnapshotBody> {
  const [counts, storage] = await Promise.all([countRows(sources.db, nowIso(now)), storedBytes(sources.db)])
  return toStatsSnapshot({
    now,
    cacheMs: sources.cacheMs,
    version: PACKAGE_VERSION,
    uptimeSeconds: process.uptime(),
    memory: process.memoryUsage(),
    cpu: process.cpuUsage(),
    eventLoop: sources.eventLoop.read(),
    requests: { total: sources.metrics.total, routes: sources.metrics.summary() },
    counts,
    storage,
  })
}
