// The 'db' plugin: the database DATABASE_URL names, migrated to the latest
// schema before any plugin that queries it loads, as `app.db`; destroyed when
// the app closes. A database that cannot be reached or migrated fails the
// registration with its one-line ConfigError, so nothing listens.
import fp from 'fastify-plugin'
import { migrateToLatest, openDatabase } from './index.js'
import type { Db } from './index.js'

declare module 'fastify' {
  interface FastifyInstance {
    db: Db
  }
}

export default fp(async (app) => {
  const db = await openDatabase(app.config.databaseUrl)
  try {
    await migrateToLatest(db)
  } catch (error) {
    await db.destroy()
    throw error
  }
  app.decorate('db', db)
  app.addHook('onClose', async () => {
    await db.destroy()
  })
}, { name: 'db', decorators: { fastify: ['config'] } })
