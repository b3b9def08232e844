// GET /api/update-check/keys/: the public keys an updater verifies the
// Packs-Signature header with (docs/update-protocol.md).
import type { App } from '../http/types.js'
import { errorResponses } from '../api/common.js'
import { SigningKeys, type SigningKeysBody } from '../api/signing.js'

export default async function signingRoutes(app: App): Promise<void> {
  app.get('/api/update-check/keys/', {
    config: { access: 'gate' },
    schema: {
      summary: 'Signing keys',
      description: 'The Ed25519 public keys that sign update-check answers (the Packs-Signature header of every 200 of the update-check, '
        + 'its batch and its by-hash lookups), current first. Pin the current key on first use; after a rotation, the new key carries '
        + 'an endorsement signed by the one before it, so a client can follow the chain from the key it pinned. See docs/update-protocol.md.',
      tags: ['update-check'],
      response: { 200: SigningKeys, ...errorResponses(401) },
    },
  }, async (_request, reply): Promise<SigningKeysBody> => {
    // Read afresh: a client that just met the new key of a rotation (from an instance that has switched) must find it
    // here, on any instance. One small read; clients ask only when they meet a key they have not pinned.
    await app.signing.reload()
    reply.header('cache-control', 'no-cache')
    return { keys: app.signing.publicKeys() }
  })
}
