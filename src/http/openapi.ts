import type { App } from './types.js'

export default async function schemaRoutes(app: App): Promise<void> {
  // Generated from the route schemas by @fastify/swagger, never written by hand.
  app.get('/api/schema/', { schema: { hide: true } }, async () => app.swagger())
}
