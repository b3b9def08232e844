// The 'assets' plugin: the client bundle and styles the pages link to (./assets.ts), read once at start as
// `app.assets`.
import fp from 'fastify-plugin'
import { Assets } from './assets.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The client bundle the pages link to. */
    assets: Assets
  }
}

export default fp(async (app) => {
  app.decorate('assets', Assets.load())
}, { name: 'assets' })
