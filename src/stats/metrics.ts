// What the process measures of itself: per-route request counts and latency
// percentiles for the staff statistics, the event loop's delay, and the
// running totals that GET /metrics exposes (./prometheus.ts): requests per
// status, durations in histogram buckets per status class, bytes each way.
// Latencies are kept in a fixed ring per route, so memory stays bounded and
// the percentiles describe recent traffic. A route is the route's pattern
// (or 'unmatched'), never the URL asked, so the number of series is bounded by
// the route table whatever clients send.
//
// record() runs for every request, the update-check's fast path included
// (src/update-check/fast-path.ts), so it allocates nothing once a route has
// been seen: its counts are preallocated arrays (a Map of status codes made it
// three times slower, 60 ns a call against 20).
import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'

const SAMPLES_PER_ROUTE = 1024

/**
 * Upper bounds, in seconds, of the request-duration histogram's buckets. From half a millisecond (a cached
 * update-check takes a tenth of that) to two minutes (a large upload on a slow line), about 2.5 x apart.
 */
export const DURATION_BUCKETS_SECONDS: readonly number[] = Object.freeze([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120])
const BUCKET_BOUNDS_MS = Float64Array.from(DURATION_BUCKETS_SECONDS, (seconds) => seconds * 1000)
/** Per status class: one count per bucket, and one for durations above the last bound. */
export const BUCKET_SLOTS = BUCKET_BOUNDS_MS.length + 1
const SLOTS = BUCKET_SLOTS
/** Status codes 100 to 599, one count each. */
const STATUS_CODES = 500
/** 1xx to 5xx. */
export const STATUS_CLASSES: readonly string[] = Object.freeze(['1xx', '2xx', '3xx', '4xx', '5xx'])

interface RouteSeries {
  count: number
  errors: number
  samples: Float64Array
  next: number
  filled: number
  /** Requests per status code, at `status - 100` (Node sends only 100-599). */
  statuses: Float64Array
  /** Durations per status class: SLOTS counts per class, each bucket's own (not cumulative). */
  buckets: Float64Array
  /** Per status class, the sum of the durations in ms. */
  sums: Float64Array
  bytesSent: number
  bytesReceived: number
}

/** One route's running totals, as GET /metrics exposes them. */
export interface RouteTotals {
  /** "METHOD /route/pattern", or 'unmatched'. */
  route: string
  /** Requests per status code, at `status - 100`. */
  statuses: Float64Array
  /** For status class `c` (STATUS_CLASSES' index) and bucket `b`: `buckets[c * (bounds + 1) + b]`, the last one past every bound. */
  buckets: Float64Array
  /** Per status class, the durations' sum in ms. */
  sums: Float64Array
  bytesSent: number
  bytesReceived: number
}

export interface RouteSummary {
  route: string
  count: number
  errors: number
  p50_ms: number
  p90_ms: number
  p99_ms: number
  max_ms: number
}

export class RouteMetrics {
  private readonly routes = new Map<string, RouteSeries>()
  total = 0

  /** One answered request: its route's key, how long it took, its status, and the bytes it wrote and read. */
  record(route: string, durationMs: number, status: number, bytesSent = 0, bytesReceived = 0): void {
    let series = this.routes.get(route)
    if (!series) {
      series = {
        count: 0, errors: 0, samples: new Float64Array(SAMPLES_PER_ROUTE), next: 0, filled: 0,
        statuses: new Float64Array(STATUS_CODES), buckets: new Float64Array(STATUS_CLASSES.length * SLOTS), sums: new Float64Array(STATUS_CLASSES.length),
        bytesSent: 0, bytesReceived: 0,
      }
      this.routes.set(route, series)
    }
    this.total += 1
    series.count += 1
    if (status >= 500) series.errors += 1
    series.samples[series.next] = durationMs
    series.next = (series.next + 1) % SAMPLES_PER_ROUTE
    series.filled = Math.min(series.filled + 1, SAMPLES_PER_ROUTE)
    // Node sends only 100-599; anything else would be a bug, and is counted as a 599.
    const code = status >= 100 && status < 600 ? status - 100 : STATUS_CODES - 1
    series.statuses[code]! += 1
    const statusClass = (code / 100) | 0
    let slot = 0
    while (slot < BUCKET_BOUNDS_MS.length && durationMs > BUCKET_BOUNDS_MS[slot]!) slot++
    series.buckets[statusClass * SLOTS + slot]! += 1
    series.sums[statusClass]! += durationMs
    series.bytesSent += bytesSent
    series.bytesReceived += bytesReceived
  }

  /** Every route's running totals since start, for GET /metrics. */
  totals(): RouteTotals[] {
    return [...this.routes.entries()].map(([route, s]) => ({
      route, statuses: s.statuses, buckets: s.buckets, sums: s.sums, bytesSent: s.bytesSent, bytesReceived: s.bytesReceived,
    }))
  }

  summary(): RouteSummary[] {
    return [...this.routes.entries()]
      .map(([route, s]) => {
        const sorted = Array.from(s.samples.subarray(0, s.filled)).sort((a, b) => a - b)
        return {
          route,
          count: s.count,
          errors: s.errors,
          p50_ms: round(percentile(sorted, 0.5)),
          p90_ms: round(percentile(sorted, 0.9)),
          p99_ms: round(percentile(sorted, 0.99)),
          max_ms: round(sorted.at(-1) ?? 0),
        }
      })
      .sort((a, b) => b.count - a.count)
  }
}

/**
 * Bytes written to and read from every client connection of a server, for GET /metrics: answers of the
 * update-check's fast path and headers included, which no route sees. Counted by the sockets themselves, so a
 * request costs nothing here; a connection costs a set entry while open.
 */
export class ConnectionBytes {
  private readonly open = new Set<Socket>()
  private closedSent = 0
  private closedReceived = 0

  watch(server: Server): void {
    server.on('connection', (socket: Socket) => {
      this.open.add(socket)
      socket.once('close', () => {
        this.open.delete(socket)
        this.closedSent += socket.bytesWritten
        this.closedReceived += socket.bytesRead
      })
    })
  }

  totals(): { sent: number; received: number } {
    let sent = this.closedSent
    let received = this.closedReceived
    for (const socket of this.open) {
      sent += socket.bytesWritten
      received += socket.bytesRead
    }
    return { sent, received }
  }
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))
  return sorted[rank]!
}

export interface EventLoopDelay {
  p50_ms: number
  p99_ms: number
  max_ms: number
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

const round = (ms: number) => Math.round(ms * 1000) / 1000
