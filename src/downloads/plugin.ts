// The 'downloads' plugin: the download counter (./counter.ts) as
// `app.downloads`. Files call app.downloads.record() when an archive is
// fetched with download=1; the counter writes in batches on its own timer and
// once more when the app closes (before the database closes: onClose hooks
// run last-registered first, and this one is registered after 'db').
import fp from 'fastify-plugin'
import type { App } from '../http/types.js'
import { DownloadCounter } from './counter.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Archive downloads counted once per client address, version and UTC day, written in batches. */
    downloads: DownloadCounter
  }
}

export interface DownloadsOptions {
  /** Distinct downloads that may wait in memory (DEFAULT_MAX_PENDING): tests set it small and exceed it. */
  maxPending?: number | undefined
  /** How often they are written (DEFAULT_FLUSH_INTERVAL_MS). */
  flushIntervalMs?: number | undefined
}

async function downloadsPlugin(app: App, options: DownloadsOptions): Promise<void> {
  const counter = new DownloadCounter({
    db: app.db,
    secret: app.gate.siteSecret,
    clock: app.clock,
    maxPending: options.maxPending,
    flushIntervalMs: options.flushIntervalMs,
    log: app.log,
  })
  app.decorate('downloads', counter)
  app.addHook('onClose', async () => {
    try {
      await counter.close()
    } catch (error) {
      // A database gone before the last batch: those counts are lost, which must not stop the rest of the close.
      app.log.error({ err: error, waiting: counter.pendingCount }, 'writing the last download counts failed')
    }
  })
}

export default fp(downloadsPlugin, { name: 'downloads', dependencies: ['db', 'gate'], decorators: { fastify: ['clock'] } })
