// The 'metrics' plugin: what the staff statistics measure, and the snapshot
// that shows it. Every response is recorded per route (app.metrics); the
// event loop's delay is sampled from registration until the app closes; and
// app.statsSnapshot() builds the snapshot at most once per PACKS_STATS_CACHE
// window, through the snapshot cache the 'shared-state' plugin chose (this
// process's memory, or Redis shared by every instance).
import fp from 'fastify-plugin'
import type { App } from '../http/types.js'
import { EventLoopMonitor, RouteMetrics } from './metrics.js'
import { buildSnapshot } from './service.js'
import type { StatsSnapshotBody } from '../api/stats.js'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: RouteMetrics
    /** The statistics snapshot, built at most once per PACKS_STATS_CACHE window (the API and the staff page share it). */
    statsSnapshot(): Promise<StatsSnapshotBody>
  }
}

async function metricsPlugin(app: App): Promise<void> {
  const metrics = new RouteMetrics()
  const eventLoop = new EventLoopMonitor()
  app.decorate('metrics', metrics)
  app.decorate('statsSnapshot', () =>
    app.statsSnapshotCache.get(() => buildSnapshot({ db: app.db, metrics, eventLoop, cacheMs: app.config.statsCacheMs }, app.clock())))
  // request.routeKey is set by the 'auth' plugin's onRequest hook, which reads the route's options anyway.
  app.addHook('onResponse', (request, reply, done) => {
    metrics.record(request.routeKey ?? 'unmatched', reply.elapsedTime, reply.statusCode)
    done()
  })
  app.addHook('onClose', (_instance, done) => {
    eventLoop.stop()
    done()
  })
}

export default fp(metricsPlugin, { name: 'metrics', dependencies: ['db', 'shared-state', 'auth'], decorators: { fastify: ['config', 'clock'] } })
