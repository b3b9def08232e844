// The 'webhooks' plugin: this instance's dispatcher of the outbox (./dispatcher.ts) as `app.webhookDispatcher`.
// It starts once the app is ready (a server, and a test's app.inject() site alike) and stops when the app
// closes, before the database does (onClose hooks run last-registered first, and this one comes after 'db').
import fp from 'fastify-plugin'
import type { App } from '../http/types.js'
import { fileLinkKey } from '../modrinth/file-links.js'
import { Dispatcher } from './dispatcher.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Sends the webhooks' deliveries from the outbox. */
    webhookDispatcher: Dispatcher
  }
}

export interface WebhooksOptions {
  /** Whether this app sends deliveries (true); a test that drives the dispatcher by hand turns it off. */
  dispatch?: boolean | undefined
  /** A try's timeout (10 s): tests shorten it. */
  timeoutMs?: number | undefined
}

async function webhooksPlugin(app: App, options: WebhooksOptions): Promise<void> {
  const dispatcher = new Dispatcher({
    db: app.db,
    siteSecret: app.gate.siteSecret,
    settings: app.config.webhooks,
    baseUrl: app.config.baseUrl,
    log: app.log,
    clock: app.clock,
    fileLinkKey: () => fileLinkKey(app.gate),
    timeoutMs: options.timeoutMs,
  })
  app.decorate('webhookDispatcher', dispatcher)
  if (options.dispatch !== false) app.addHook('onReady', () => dispatcher.start())
  app.addHook('onClose', () => dispatcher.stop())
}

export default fp(webhooksPlugin, { name: 'webhooks', dependencies: ['db', 'gate'], decorators: { fastify: ['clock', 'config'] } })
