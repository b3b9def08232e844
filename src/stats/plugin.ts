// The 'metrics' plugin: what the process measures of itself, for the staff
// statistics and for Prometheus. Every response is recorded per route
// (app.metrics); the event loop's delay is sampled from registration until
// the app closes; app.statsSnapshot() builds the snapshot at most once per
// PACKS_STATS_CACHE window, through the snapshot cache the 'shared-state'
// plugin chose (this process's memory, or Redis shared by every instance).
// With PACKS_METRICS_TOKEN set, app.prometheus makes GET /metrics' text
// (./prometheus.ts), and requests also count the bytes they moved.
import fp from 'fastify-plugin'
import type { Socket } from 'node:net'
import type { Db } from '../db/index.js'
import { PROBE_TIMEOUT_MS, Readiness } from '../http/health.js'
import type { App } from '../http/types.js'
import { MemorySnapshotCache } from './cache.js'
import { ConnectionBytes, EventLoopMonitor, RouteMetrics } from './metrics.js'
import { createExporter, type Exporter, type UpdateCheckFigures } from './prometheus.js'
import { countPendingUploads } from './repository.js'
import { PACKAGE_VERSION, buildSnapshot } from './service.js'
import type { StatsSnapshotBody } from '../api/stats.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: RouteMetrics
    /** The statistics snapshot, built at most once per PACKS_STATS_CACHE window (the API and the staff page share it). */
    statsSnapshot(): Promise<StatsSnapshotBody>
    /** GET /metrics' exposition; null while PACKS_METRICS_TOKEN is unset (metrics off). */
    prometheus: Exporter | null
  }
}

export interface MetricsOptions {
  /** The backends' checks, shared with GET /readyz (src/app.ts makes them). */
  readiness?: Readiness
  /** The update-check cache's figures, read at scrape time (src/app.ts reads them from the update-check). */
  updateCheck?: () => UpdateCheckFigures
  /** Waiting rows of later folders' queues, by name (src/app.ts: the webhooks' outbox, the notifications' fan-outs). */
  queues?: Readonly<Record<string, (db: Db) => Promise<number>>>
}

/**
 * Queue lengths are counted at most once per this window: Prometheus scrapes every 15 s or so, and a scrape
 * storm (several Prometheus servers, someone's curl loop) must not become a stream of counts.
 */
export const QUEUE_COUNT_CACHE_MS = 5000

const NO_UPDATE_CHECKS: UpdateCheckFigures = { fastPathHits: 0, hits: 0, misses: 0, answers: 0, bytes: 0 }

async function metricsPlugin(app: App, options: MetricsOptions): Promise<void> {
  const metrics = new RouteMetrics()
  const eventLoop = new EventLoopMonitor()
  app.decorate('metrics', metrics)
  app.decorate('statsSnapshot', () =>
    app.statsSnapshotCache.get(() => buildSnapshot({ db: app.db, metrics, eventLoop, cacheMs: app.config.statsCacheMs }, app.clock())))
  app.addHook('onClose', (_instance, done) => {
    eventLoop.stop()
    done()
  })

  const exporter = app.config.metricsToken === null ? null : await openExporter(app, metrics, options)
  app.decorate('prometheus', exporter)
  if (exporter === null) {
    // request.routeKey is set by the 'auth' plugin's onRequest hook, which reads the route's options anyway.
    app.addHook('onResponse', (request, reply, done) => {
      metrics.record(request.routeKey ?? 'unmatched', reply.elapsedTime, reply.statusCode)
      done()
    })
    return
  }
  // The socket's counters rather than Content-Length: a chunked upload counts what was really read, a 304 or a
  // HEAD what really went out. A request counts what its connection moved since the answer before it on that
  // connection: its own headers and body, and its answer's. Light-my-request's sockets (app.inject) have no
  // counters: nothing is counted.
  const marks = new WeakMap<Socket, { sent: number; received: number }>()
  app.addHook('onResponse', (request, reply, done) => {
    const socket = request.raw.socket as Socket | null
    let sent = 0
    let received = 0
    if (socket && typeof socket.bytesWritten === 'number' && typeof socket.bytesRead === 'number') {
      const mark = marks.get(socket)
      const written = socket.bytesWritten
      const read = socket.bytesRead
      sent = written - (mark?.sent ?? 0)
      received = read - (mark?.received ?? 0)
      if (mark) {
        mark.sent = written
        mark.received = read
      } else {
        marks.set(socket, { sent: written, received: read })
      }
    }
    metrics.record(request.routeKey ?? 'unmatched', reply.elapsedTime, reply.statusCode, sent, received)
    done()
  })
}

async function openExporter(app: App, metrics: RouteMetrics, options: MetricsOptions): Promise<Exporter> {
  const connections = new ConnectionBytes()
  connections.watch(app.server)
  const counters: Readonly<Record<string, (db: Db) => Promise<number>>> = { pending_uploads: countPendingUploads, ...options.queues }
  const counted = new MemorySnapshotCache<Record<string, number>>(QUEUE_COUNT_CACHE_MS, app.clock)
  const countAll = async () => {
    const names = Object.keys(counters)
    const counts = await Promise.all(names.map((name) => counters[name]!(app.db)))
    return Object.fromEntries(names.map((name, i) => [name, counts[i]!]))
  }
  return createExporter({
    routes: metrics,
    connections,
    updateCheck: options.updateCheck ?? (() => NO_UPDATE_CHECKS),
    readiness: options.readiness ?? new Readiness([]),
    // A count still running when the time is up goes on (the cache waits for it), and the scrape goes without it.
    queues: () => withinTime(counted.get(countAll), PROBE_TIMEOUT_MS),
    version: PACKAGE_VERSION,
  })
}

/** The promise's value, or undefined when it fails or takes longer than `ms`. */
function withinTime<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), ms)
    void promise.then(resolve, () => resolve(undefined)).finally(() => clearTimeout(timer))
  })
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['db', 'shared-state', 'auth'], decorators: { fastify: ['config', 'clock'] } })
