// What the process, the database and the store report, in the snapshot's API
// shape (src/api/stats.ts): snake_case members, milliseconds and seconds
// rounded to the microsecond, an ISO `Z` time.
import type { StatsSnapshotBody } from '../api/stats.js'
import { nowIso } from '../db/time.js'
import type { EventLoopDelay, RouteSummary } from './metrics.js'
import type { RowCounts, StoredBytes } from './repository.js'

export interface SnapshotParts {
  /** When the data was read (ms since the epoch). */
  now: number
  cacheMs: number
  version: string
  uptimeSeconds: number
  memory: NodeJS.MemoryUsage
  /** process.cpuUsage(): microseconds. */
  cpu: NodeJS.CpuUsage
  eventLoop: EventLoopDelay
  requests: { total: number; routes: RouteSummary[] }
  counts: RowCounts
  storage: StoredBytes
}

export function toStatsSnapshot(parts: SnapshotParts): StatsSnapshotBody {
  const { memory, cpu, counts, storage } = parts
  return {
    generated_at: nowIso(parts.now),
    cache_seconds: parts.cacheMs / 1000,
    version: parts.version,
    node_version: process.version,
    uptime_seconds: round(parts.uptimeSeconds),
    process: {
      pid: process.pid,
      memory: { rss: memory.rss, heap_used: memory.heapUsed, heap_total: memory.heapTotal, external: memory.external },
      cpu: { user_ms: round(cpu.user / 1000), system_ms: round(cpu.system / 1000) },
    },
    event_loop: { delay: parts.eventLoop },
    requests: parts.requests,
    counts: {
      users: counts.users,
      packs: counts.packs,
      versions: counts.versions,
      pending_uploads: counts.pending_uploads,
      drafts: counts.drafts,
      api_tokens: counts.api_tokens,
      downloads: counts.downloads,
      downloads_today: counts.downloads_today,
    },
    storage: { files: storage.files, bytes: storage.bytes },
  }
}

const round = (value: number) => Math.round(value * 1000) / 1000
