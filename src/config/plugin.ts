// The 'config' plugin: the settings (./index.ts) as `app.config`, and the clock every time window is measured on
// as `app.clock`. Registered first: every other plugin reads them.
import fp from 'fastify-plugin'
import type { Config } from './index.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    /** The time the statistics cache and the sweep measure their windows on: Date.now, or a test's own clock (BuildOptions.clock). */
    clock(): number
  }
}

export interface ConfigOptions {
  config: Config
  clock?: (() => number) | undefined
}

export default fp(async (app, options: ConfigOptions) => {
  app.decorate('config', options.config)
  app.decorate('clock', options.clock ?? Date.now)
}, { name: 'config' })
