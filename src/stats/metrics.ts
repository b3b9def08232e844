// What the process measures of itself for the staff statistics: per-route
// request counts and latency percentiles, and the event loop's delay.
// Latencies are kept in a fixed ring per route, so memory stays bounded and
// the percentiles describe recent traffic.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'

const SAMPLES_PER_ROUTE = 1024

interface RouteSeries {
  count: number
  errors: number
  samples: Float64Array
  next: number
  filled: number
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

  record(route: string, durationMs: number, status: number): void {
    let series = this.routes.get(route)
    if (!series) {
      series = { count: 0, errors: 0, samples: new Float64Array(SAMPLES_PER_ROUTE), next: 0, filled: 0 }
      this.routes.set(route, series)
    }
    this.total += 1
    series.count += 1
    if (status >= 500) series.errors += 1
    series.samples[series.next] = durationMs
    series.next = (series.next + 1) % SAMPLES_PER_ROUTE
    series.filled = Math.min(series.filled + 1, SAMPLES_PER_ROUTE)
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
