// The batch update-check (POST /api/update-check/): one request for every pack
// a player has, instead of one per pack on every game start.
import { Type } from 'typebox'
import { publicOrigin } from '../http/urls.js'
import type { App } from '../http/types.js'
import { errorResponses } from '../api/common.js'
import { UpdateCheckBatch, UpdateCheckBatchBody } from '../api/update-check.js'
import { fileUrls } from '../http/urls.js'
import { updateCheckBatch } from './service.js'
import { gameOf, sendSignedJson } from './protocol.js'

export default async function updateCheckBatchRoutes(app: App): Promise<void> {
  app.post('/api/update-check/', {
    // A query: it changes nothing, so a session's POST needs no CSRF token and a read-only token may send it.
    config: { access: 'gate', query: true },
    schema: {
      summary: 'Batch update-check',
      description: 'Checks up to 200 packs (namespace:pack_id) in one request, with the single check\'s optional pack_format or '
        + 'game_version for all of them. Each id appears once, spelt as sent, in the order sent, with exactly the single check\'s 200 '
        + 'answer, or null where it would say 404. Signed like the single check (RFC 9421, and the legacy Packs-Signature); send the body\'s Content-Digest (RFC 9530) to have the signature cover it, so the answer names its question. A strong ETag covers the whole '
        + 'body: send it back in If-None-Match with the same body to get 304 while no answer in it changed.',
      tags: ['update-check'],
      body: UpdateCheckBatchBody,
      response: { 200: UpdateCheckBatch, 304: Type.Null({ description: 'Not modified: the ETag still matches.' }), ...errorResponses(400, 401, 404) },
    },
  }, async (request, reply) => {
    const answer = await updateCheckBatch(app, request.body.packs, publicOrigin(app.config, request), fileUrls(app.config, request), gameOf(request.body))
    return sendSignedJson(app.signing, request, reply, answer)
  })
}
