// Per-route request counts and latency percentiles for the staff statistics.
// Latencies are kept in a fixed ring per route, so memory stays bounded and
// the percentiles describe recent traffic.

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

const round = (ms: number) => Math.round(ms * 1000) / 1000
