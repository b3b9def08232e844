// GET /api/update-check/keys/: the public keys an updater verifies the
// update-check's signatures with (docs/update-protocol.md), itself signed.
import type { App } from '../http/types.js'
import { errorResponses } from '../api/common.js'
import { SigningKeys, type SigningKeysBody } from '../api/signing.js'
import { answeredRequest } from './message-signature.js'

export default async function signingRoutes(app: App): Promise<void> {
  app.get('/api/update-check/keys/', {
    config: { access: 'gate' },
    schema: {
      summary: 'Signing keys',
      description: 'The Ed25519 public keys that sign update-check answers (the RFC 9421 Signature and the legacy Packs-Signature of '
        + 'every 200 of the update-check, its batch and its by-hash lookups), current first. Pin the current key on first use; after a '
        + 'rotation, the new key carries an endorsement signed by the one before it, so a client can follow the chain from the key it '
        + 'pinned. expires_at says when each key stops being valid: refuse a signature by a key past it, even a pinned one. This list '
        + 'is itself signed (RFC 9421) by the current key. See docs/update-protocol.md.',
      tags: ['update-check'],
      response: { 200: SigningKeys, ...errorResponses(401) },
    },
  }, async (request, reply) => {
    // Read afresh: a client that just met the new key of a rotation (from an instance that has switched) must find it
    // here, on any instance; and a client re-reads this list on every run to learn of retired keys. One small read.
    await app.signing.reload()
    // Signed like an update-check answer (by the current key, fresh), so a client can tell a current list from
    // a recorded one that still shows a retired key as valid.
    const body = JSON.stringify({ keys: app.signing.publicKeys() } satisfies SigningKeysBody)
    const signature = app.signing.messageSignature(answeredRequest(request.method, request.url), body)
    reply.header('cache-control', 'no-cache')
      .header('content-digest', signature.contentDigest)
      .header('signature-input', signature.signatureInput)
      .header('signature', signature.signature)
    // A string with a JSON content type goes out as is; the response schema still documents it.
    return reply.type('application/json; charset=utf-8').send(body as unknown as SigningKeysBody)
  })
}
