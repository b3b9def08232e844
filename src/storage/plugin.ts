// The 'storage' plugin: the FileStore STORAGE_URL names, as `app.store`. A
// remote store is checked here (reachable, and ours), so a bad STORAGE_URL
// fails the registration with its one-line ConfigError before anything
// listens rather than at the first upload. Closed when the app closes.
import fp from 'fastify-plugin'
import { openFileStore } from './index.js'
import type { FileStore } from './index.js'

declare module 'fastify' {
  interface FastifyInstance {
    store: FileStore
  }
}

export default fp(async (app) => {
  const store = await openFileStore(app.config.storageUrl, { groupReadable: app.config.fileDelivery.accelRedirect !== null })
  try {
    await store.check?.()
  } catch (error) {
    await store.close()
    throw error
  }
  // Once per start: a store without an optional operation still serves, with what is lost said here.
  const limitation = store.limitation?.()
  if (limitation) app.log.warn(`packs: ${limitation}`)
  app.decorate('store', store)
  app.addHook('onClose', async () => {
    await store.close()
  })
}, { name: 'storage', decorators: { fastify: ['config'] } })
