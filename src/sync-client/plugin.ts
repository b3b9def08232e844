// The 'sync-client' plugin: the packs-sync bundle (./bundle.ts) as
// `app.syncClient`, read once at start, for its download route and the page
// that links to it; null when it was not built, which the log says once.
import fp from 'fastify-plugin'
import { loadSyncClient, type SyncClientBundle } from './bundle.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The packs-sync bundle this site serves its players (src/sync-client/), or null when it was not built. */
    syncClient: SyncClientBundle | null
  }
}

export interface SyncClientOptions {
  /** Where the bundle is read from (SYNC_CLIENT_BUNDLE by default): tests point it at a file that is not there. */
  file?: string
}

export default fp<SyncClientOptions>(async (app, options) => {
  const loaded = loadSyncClient(options.file)
  if (loaded.bundle === null) app.log.warn(`packs-sync is not served to players: ${loaded.reason}; "npm run build" makes it`)
  app.decorate('syncClient', loaded.bundle)
}, { name: 'sync-client' })
