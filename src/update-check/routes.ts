// The in-game update-check (GET /api/packs/{namespace}/{pack_id}/latest).
import { Type } from 'typebox'
import { noneMatch } from '../http/conditional.js'
import { publicOrigin } from '../http/urls.js'
import type { App } from '../http/types.js'
import { errorResponses } from '../api/common.js'
import { PackParams } from '../api/packs.js'
import { PackLatest, UpdateCheckQuery, type PackLatestBody } from '../api/update-check.js'
import { fileUrls } from '../http/urls.js'
import { updateCheck } from './service.js'
import { gameOf, signCached } from './protocol.js'

export default async function updateCheckRoutes(app: App): Promise<void> {
  app.get('/api/packs/:namespace/:pack_id/latest', {
    config: { access: 'gate' },
    schema: {
      summary: 'Pack update-check',
      description: 'The newest version of the pack namespace:pack_id, for in-game auto-updaters. With pack_format or '
        + 'game_version: the newest version that runs on that game (404 with a detail when none does); each has its own ETag. '
        + 'Yanked versions are never the answer. A 200 is signed (RFC 9421: Content-Digest, Signature-Input, Signature; Ed25519 by '
        + 'a key of GET /api/update-check/keys/) over its body, this request\'s path and query, and when it was issued and expires; '
        + 'the legacy Packs-Signature header signs the body alone. See docs/update-protocol.md. Answers with a strong ETag '
        + 'and Cache-Control: no-cache; send If-None-Match to get 304 while nothing changed.',
      tags: ['packs'],
      params: PackParams,
      querystring: UpdateCheckQuery,
      response: { 200: PackLatest, 304: Type.Null({ description: 'Not modified: the ETag still matches.' }), ...errorResponses(400, 401, 404) },
    },
  }, async (request, reply) => {
    const { namespace, pack_id: packId } = request.params
    const answer = await updateCheck(app, namespace, packId, publicOrigin(app.config, request), fileUrls(app.config, request), gameOf(request.query))
    // Clients may cache, but must ask every time: a new version has to be seen at once.
    reply.header('etag', answer.etag).header('cache-control', 'no-cache')
    if (noneMatch(request.headers['if-none-match'], answer.etag)) {
      // No content, so no Content-Length: a serialised null once claimed 4 bytes that never came, and strict
      // clients waited for them. Fastify's automatic HEAD route states the length of whatever it is handed
      // ("0" for nothing), so HEAD is handed the 200's body: its length and type are the only ones RFC 9110
      // §8.6 allows on a 304, and no body goes out after a HEAD.
      if (request.method !== 'HEAD') return reply.code(304).send(undefined as never)
      return reply.code(304).type('application/json; charset=utf-8').send(answer.body as never)
    }
    // Signed once per cached answer, key and half signature lifetime (src/signing/service.ts).
    signCached(app.signing, request, reply, answer)
    // A string with a JSON content type goes out as is; the response schema still documents it.
    return reply.type('application/json; charset=utf-8').send(answer.body as unknown as PackLatestBody)
  })
}
