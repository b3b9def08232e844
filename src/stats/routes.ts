import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import { StatsSnapshot } from '../api/stats.js'

export default async function statsRoutes(app: App): Promise<void> {
  app.get('/api/stats/', {
    config: { access: 'staff', heavy: true },
    schema: {
      summary: 'Server statistics (staff only)',
      description:
        'A snapshot of the process, the event loop, per-route request metrics and database counts. ' +
        `Built at most once per cache window (${app.config.statsCacheMs / 1000} s): calls within it get the same snapshot, same \`generated_at\`.`,
      tags: ['stats'],
      security: bearerAuth,
      response: { 200: StatsSnapshot, ...errorResponses(401, 403) },
    },
  }, async () => app.statsSnapshot())
}
