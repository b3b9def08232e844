// GET /metrics's text, in Prometheus' exposition format, made by prom-client
// (the Prometheus client for Node that Prometheus' own documentation lists).
// prom-client is loaded only when PACKS_METRICS_TOKEN turns /metrics on, so a
// site without it starts as fast as before.
//
// The request figures are not kept by prom-client: its histogram counts one
// observe() at a time, and each observe builds its labels' hash (a new string)
// and a closure, which on the update-check's fast path would be allocations
// per request. RouteMetrics (./metrics.ts) already counts every request in
// preallocated arrays for the statistics; the families below read those
// arrays when Prometheus scrapes. Everything asked of the database or the
// store at scrape time is cached and bounded in time by the caller
// (./plugin.ts, src/http/health.ts).
//
// With WEB_CONCURRENCY above 1 a scrape reaches one worker, chosen by the
// kernel. Each would report only its own requests, so Prometheus would see
// counters jump between workers' totals. A worker asks the primary instead,
// which gathers every worker's figures with prom-client's AggregatorRegistry
// and adds them up (gauges of shared things, like the database's health, are
// taken from one worker or as the worst of them).
import cluster from 'node:cluster'
import type { Gauge, Histogram, MetricType, Registry } from 'prom-client'
import type { Readiness } from '../http/health.js'
import { BUCKET_SLOTS, DURATION_BUCKETS_SECONDS, STATUS_CLASSES, type ConnectionBytes, type RouteMetrics } from './metrics.js'

type PromClient = typeof import('prom-client')

/** What the update-check's cache did, read at scrape time (src/app.ts gathers it from the update-check). */
export interface UpdateCheckFigures {
  /** Answered by the fast path before Fastify: each one a cache hit. */
  fastPathHits: number
  /** Lookups of the update-check's routes that found an answer cached. */
  hits: number
  /** Lookups that read the database. */
  misses: number
  /** Answers held, and what they weigh (the cache's own estimate). */
  answers: number
  bytes: number
}

export interface ExporterSources {
  routes: RouteMetrics
  connections: ConnectionBytes
  updateCheck: () => UpdateCheckFigures
  readiness: Readiness
  /** Rows waiting, per queue; undefined when they could not be counted in time (the database down). */
  queues: () => Promise<Readonly<Record<string, number>> | undefined>
  version: string
}

export interface Exporter {
  readonly contentType: string
  /** The whole exposition: this process's figures, or with several workers every worker's added up. */
  metrics(): Promise<string>
}

/** GC pauses are mostly well under a millisecond; a long full collection is tens of milliseconds to seconds. */
const GC_BUCKETS_SECONDS = [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5]

/** The process's own figures (CPU, memory, event-loop delay, GC): one registry per process, however many apps it builds. */
let processRegistry: Registry | undefined

function defaultMetrics(client: PromClient): Registry {
  if (processRegistry === undefined) {
    processRegistry = new client.Registry()
    // A 10 ms sampling resolution, as the statistics' own event-loop monitor (./metrics.ts).
    client.collectDefaultMetrics({ register: processRegistry, gcDurationBuckets: GC_BUCKETS_SECONDS, eventLoopMonitoringPrecision: 10 })
  }
  return processRegistry
}

/** "GET /api/packs/:namespace/:pack_id/latest" into its method and pattern; 'unmatched' has no method. */
function splitRouteKey(key: string): { method: string; route: string } {
  const space = key.indexOf(' ')
  return space === -1 ? { method: '', route: key } : { method: key.slice(0, space), route: key.slice(space + 1) }
}

export async function createExporter(sources: ExporterSources): Promise<Exporter> {
  const client = await import('prom-client')
  const registry = new client.Registry()
  const { routes } = sources

  new client.Counter({
    name: 'packs_http_requests_total',
    help: 'HTTP requests answered, by route pattern (unmatched: no route) and status code; update-checks answered by the fast path included.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const totals of routes.totals()) {
        const { method, route } = splitRouteKey(totals.route)
        totals.statuses.forEach((count, code) => { if (count > 0) this.inc({ method, route, status: String(code + 100) }, count) })
      }
    },
  })

  const RouteDurations = routeDurationsClass(client)
  new RouteDurations(routes, registry)

  new client.Counter({
    name: 'packs_http_response_bytes_total',
    help: 'Bytes written for answers (headers and body), by route pattern. Not the fast path\'s update-check answers: packs_connection_sent_bytes_total has those.',
    labelNames: ['method', 'route'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const totals of routes.totals()) if (totals.bytesSent > 0) this.inc(splitRouteKey(totals.route), totals.bytesSent)
    },
  })
  new client.Counter({
    name: 'packs_http_request_bytes_total',
    help: 'Bytes read for requests (headers and body: uploads, forms, JSON), by route pattern.',
    labelNames: ['method', 'route'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const totals of routes.totals()) if (totals.bytesReceived > 0) this.inc(splitRouteKey(totals.route), totals.bytesReceived)
    },
  })
  new client.Counter({
    name: 'packs_connection_sent_bytes_total',
    help: 'Bytes written to every client connection, all requests and headers included.',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(sources.connections.totals().sent)
    },
  })
  new client.Counter({
    name: 'packs_connection_received_bytes_total',
    help: 'Bytes read from every client connection, all requests and headers included.',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(sources.connections.totals().received)
    },
  })

  new client.Counter({
    name: 'packs_update_check_cache_hits_total',
    help: 'Update-check lookups answered from the cache: by the fast path (path="fast", before Fastify) or by the routes (path="route": the single check, the batch, by-hash).',
    labelNames: ['path'] as const,
    registers: [registry],
    collect() {
      const figures = sources.updateCheck()
      this.reset()
      this.inc({ path: 'fast' }, figures.fastPathHits)
      this.inc({ path: 'route' }, figures.hits)
    },
  })
  new client.Counter({
    name: 'packs_update_check_cache_misses_total',
    help: 'Update-check lookups that found nothing cached and read the database.',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(sources.updateCheck().misses)
    },
  })
  new client.Gauge({
    name: 'packs_update_check_cache_answers',
    help: 'Update-check answers held in this process\'s cache.',
    registers: [registry],
    collect() { this.set(sources.updateCheck().answers) },
  })
  new client.Gauge({
    name: 'packs_update_check_cache_bytes',
    help: 'What the update-check cache holds, in bytes (its own estimate, bounded by its limit).',
    registers: [registry],
    collect() { this.set(sources.updateCheck().bytes) },
  })

  // A backend is one for every worker: the worst worker's view counts.
  new client.Gauge({
    name: 'packs_backend_up',
    help: 'Whether the backend answered its readiness check (1) or not (0): database, storage, and redis when REDIS_URL is set.',
    labelNames: ['backend'] as const,
    aggregator: 'min',
    registers: [registry],
    async collect() { await setFromReadiness(this, sources.readiness, (r) => (r.ok ? 1 : 0)) },
  })
  new client.Gauge({
    name: 'packs_backend_check_seconds',
    help: 'How long the backend\'s last readiness check took (its time limit when it did not answer).',
    labelNames: ['backend'] as const,
    aggregator: 'max',
    registers: [registry],
    async collect() { await setFromReadiness(this, sources.readiness, (r) => r.ms / 1000) },
  })
  new client.Gauge({
    name: 'packs_queue_length',
    help: 'Rows waiting: pending_uploads (uploaded, not yet published), webhook_deliveries (the outbox), notification_fanouts (followers still to be told). Absent while the database does not answer.',
    labelNames: ['queue'] as const,
    aggregator: 'max',
    registers: [registry],
    async collect() {
      const counts = await sources.queues()
      this.reset()
      if (counts) for (const [queue, n] of Object.entries(counts)) this.set({ queue }, n)
    },
  })
  new client.Gauge({
    name: 'packs_build_info',
    help: 'Always 1; the version label is the running release.',
    labelNames: ['version'] as const,
    aggregator: 'first',
    registers: [registry],
    collect() {
      this.reset()
      this.set({ version: sources.version }, 1)
    },
  })

  const registries = [defaultMetrics(client), registry]
  if (cluster.isWorker) {
    // Constructing one makes prom-client answer the primary's requests for this worker's figures.
    new client.AggregatorRegistry()
    client.AggregatorRegistry.setRegistries(registries)
    return { contentType: client.Registry.PROMETHEUS_CONTENT_TYPE, metrics: fromPrimary }
  }
  return {
    contentType: client.Registry.PROMETHEUS_CONTENT_TYPE,
    metrics: async () => (await Promise.all(registries.map((r) => r.metrics()))).join('\n'),
  }
}

/** What a worker sends its primary, and what the primary answers (src/server.ts listens for it). */
const ASK = 'packs:metrics'
const ANSWER = 'packs:metrics-answer'
/** Longer than prom-client's own wait for every worker (5 s), so its error is the one told. */
const PRIMARY_TIMEOUT_MS = 6000

interface Asked { type: typeof ASK; id: number }
interface Answered { type: typeof ANSWER; id: number; text?: string; error?: string }

let asked = 0

/** In a worker: every worker's figures added up, from the primary. */
function fromPrimary(): Promise<string> {
  const id = ++asked
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      const answer = message as Partial<Answered> | null
      if (answer?.type !== ANSWER || answer.id !== id) return
      done()
      if (typeof answer.text === 'string') resolve(answer.text)
      else reject(new Error(`the primary could not gather the workers' metrics: ${answer.error ?? 'no reason given'}`))
    }
    const timer = setTimeout(() => {
      done()
      reject(new Error(`the primary did not answer with the workers' metrics within ${PRIMARY_TIMEOUT_MS / 1000} s`))
    }, PRIMARY_TIMEOUT_MS)
    const done = () => {
      clearTimeout(timer)
      process.off('message', onMessage)
    }
    process.on('message', onMessage)
    process.send!({ type: ASK, id } satisfies Asked)
  })
}

/**
 * In the primary of several workers, with PACKS_METRICS_TOKEN set: answers a worker's request with every
 * worker's figures added up (prom-client asks each worker for its registries over the cluster's channel).
 */
export async function serveClusterMetrics(): Promise<void> {
  const client = await import('prom-client')
  const aggregator = new client.AggregatorRegistry()
  cluster.on('message', (worker, message: unknown) => {
    const request = message as Partial<Asked> | null
    if (request?.type !== ASK || typeof request.id !== 'number') return
    const { id } = request
    // A worker that died meanwhile has nobody to answer.
    const answer = (reply: Answered) => { if (worker.isConnected()) worker.send(reply) }
    void aggregator.clusterMetrics().then(
      (text) => answer({ type: ANSWER, id, text }),
      (error: unknown) => answer({ type: ANSWER, id, error: error instanceof Error ? error.message : String(error) }),
    )
  })
}

async function setFromReadiness(gauge: Gauge<'backend'>, readiness: Readiness, value: (result: Awaited<ReturnType<Readiness['results']>>[number]) => number): Promise<void> {
  const results = await readiness.results()
  gauge.reset()
  for (const result of results) gauge.set({ backend: result.name }, value(result))
}

type DurationLabels = 'method' | 'route' | 'status_class'

/**
 * packs_http_request_duration_seconds, read from RouteMetrics' buckets at scrape time. A Histogram, so the
 * registry formats it and the cluster's aggregator adds it up like any other; only its values come from
 * elsewhere.
 */
const DURATION_NAME = 'packs_http_request_duration_seconds'
const DURATION_HELP = 'Time from the request\'s arrival to the last byte of its answer, by route pattern and status class.'

function routeDurationsClass(client: PromClient) {
  return class RouteDurations extends client.Histogram<DurationLabels> {
    constructor(private readonly routes: RouteMetrics, registry: Registry) {
      super({
        name: DURATION_NAME,
        help: DURATION_HELP,
        labelNames: ['method', 'route', 'status_class'],
        buckets: [...DURATION_BUCKETS_SECONDS],
        registers: [registry],
      })
    }

    override async get(): ReturnType<Histogram<DurationLabels>['get']> {
      const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = []
      const name = DURATION_NAME
      for (const totals of this.routes.totals()) {
        const { method, route } = splitRouteKey(totals.route)
        STATUS_CLASSES.forEach((statusClass, c) => {
          const base = c * BUCKET_SLOTS
          let count = 0
          for (let b = 0; b < BUCKET_SLOTS; b++) count += totals.buckets[base + b]!
          if (count === 0) return
          const labels = { method, route, status_class: statusClass }
          let cumulative = 0
          DURATION_BUCKETS_SECONDS.forEach((bound, b) => {
            cumulative += totals.buckets[base + b]!
            values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${name}_bucket` })
          })
          values.push({ labels: { ...labels, le: '+Inf' }, value: count, metricName: `${name}_bucket` })
          values.push({ labels, value: totals.sums[c]! / 1000, metricName: `${name}_sum` })
          values.push({ labels, value: count, metricName: `${name}_count` })
        })
      }
      // prom-client's declared MetricType is an enum, but its registry reads the type as the text Prometheus prints.
      return { name, help: DURATION_HELP, type: 'histogram' as unknown as MetricType, aggregator: 'sum', collect: () => {}, values }
    }

    /** What the registry's text output reads (the JSON one, for the cluster's aggregator, reads get()). */
    getForPromString(): ReturnType<Histogram<DurationLabels>['get']> {
      return this.get()
    }
  }
}
