import { EventLoopMonitor, MemorySnapshotCache, buildSnapshot, type StatsSnapshot as Snapshot } from '../domain/stats.js'
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../schemas/common.js'
import { StatsSnapshot } from '../schemas/stats.js'

export default async function statsRoutes(app: App): Promise<void> {
  const eventLoop = new EventLoopMonitor()
  const cache = new MemorySnapshotCache<Snapshot>(app.config.statsCacheMs)
  app.addHook('onClose', async () => eventLoop.stop())

  app.get('/api/stats/', {
    config: { access: 'staff' },
    schema: {
      summary: 'Server statistics (staff only)',
      description:
        'A snapshot of the process, the event loop, per-route request metrics and database counts. ' +
        `Built at most once per cache window (${app.config.statsCacheMs / 1000} s): calls within it get the same snapshot, same \`generated_at\`.`,
      tags: ['stats'],
      security: bearerAuth,
      response: { 200: StatsSnapshot, ...errorResponses(401, 403) },
    },
  }, async () => cache.get(() => buildSnapshot({ db: app.db, metrics: app.metrics, eventLoop, cacheMs: app.config.statsCacheMs })))
}
