// The 'signing' plugin: the site's signing key (./service.ts) as `app.signing`,
// made on the first start and read from the database on every other.
import fp from 'fastify-plugin'
import { Signer } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Signs update-check answers with the site's Ed25519 key. */
    signing: Signer
  }
}

export default fp(async (app) => {
  const signer = await Signer.open(app.db, app.clock, (error) => app.log.warn({ err: error }, 'could not re-read the signing keys; still signing with the ones loaded'), app.config.signatureTtlMs)
  app.decorate('signing', signer)
}, { name: 'signing', dependencies: ['db'], decorators: { fastify: ['clock', 'config'] } })
