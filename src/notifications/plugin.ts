// The 'notifications' plugin: this instance's fan-out worker (./fanout.ts), which writes the followers'
// notices that changes leave as one row each. It starts once the app is ready and stops when it closes,
// before the database does (onClose hooks run last-registered first, and this one comes after 'db').
import fp from 'fastify-plugin'
import type { App } from '../http/types.js'
import { FanoutWorker } from './fanout.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Tells pack followers their notices, a batch at a time. */
    notificationFanout: FanoutWorker
  }
}

async function notificationsPlugin(app: App): Promise<void> {
  const worker = new FanoutWorker({ db: app.db, log: app.log, clock: app.clock })
  app.decorate('notificationFanout', worker)
  app.addHook('onReady', () => worker.start())
  app.addHook('onClose', () => worker.stop())
}

export default fp(notificationsPlugin, { name: 'notifications', dependencies: ['db'], decorators: { fastify: ['clock'] } })
