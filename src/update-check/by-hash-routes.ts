// By hash: which pack and version an archive on disk is, and the newest version for the player's game.
import { Type } from 'typebox'
import { publicOrigin } from '../http/urls.js'
import type { App } from '../http/types.js'
import { errorResponses } from '../api/common.js'
import { HashLookupBatch, HashLookupBatchBody, HashMatch, HashParams, UpdateCheckQuery } from '../api/update-check.js'
import { fileUrls } from '../http/urls.js'
import { lookUpHash, lookUpHashes } from './by-hash.js'
import { gameOf, sendSignedJson } from './protocol.js'

const NotModified = Type.Null({ description: 'Not modified: the ETag still matches.' })

export default async function byHashRoutes(app: App): Promise<void> {
  app.get('/api/update-check/by-hash/:hash', {
    config: { access: 'gate' },
    schema: {
      summary: 'Which pack is this archive',
      description: 'Names the pack and version whose archive has this SHA-1 or SHA-256 (hex, any case): the first published public '
        + 'version with it, yanked ones included. `latest` is what the update-check answers for that pack with the same optional '
        + 'pack_format or game_version (null where it says 404). 404 when no public version has the hash. Signed like the update-check '
        + '(RFC 9421, and the legacy Packs-Signature), with a strong ETag.',
      tags: ['update-check'],
      params: HashParams,
      querystring: UpdateCheckQuery,
      response: { 200: HashMatch, 304: NotModified, ...errorResponses(400, 401, 404) },
    },
  }, async (request, reply) => {
    const answer = await lookUpHash(app, request.params.hash, publicOrigin(app.config, request), fileUrls(app.config, request), gameOf(request.query))
    return sendSignedJson(app.signing, request, reply, answer)
  })

  app.post('/api/update-check/by-hash/', {
    // A query: it changes nothing, so a session's POST needs no CSRF token and a read-only token may send it.
    config: { access: 'gate', query: true },
    schema: {
      summary: 'Which packs are these archives',
      description: 'The by-hash lookup for up to 200 SHA-1s and SHA-256s at once, with one optional pack_format or game_version for all. '
        + 'Each hash appears once, spelt as sent, in the order sent, with its match or null. Signed (RFC 9421; send the body\'s Content-Digest to have it covered; and the legacy Packs-Signature); a strong ETag '
        + 'covers the whole body and If-None-Match with the same body gets 304.',
      tags: ['update-check'],
      body: HashLookupBatchBody,
      response: { 200: HashLookupBatch, 304: NotModified, ...errorResponses(400, 401, 404) },
    },
  }, async (request, reply) => {
    const answer = await lookUpHashes(app, request.body.hashes, publicOrigin(app.config, request), fileUrls(app.config, request), gameOf(request.body))
    return sendSignedJson(app.signing, request, reply, answer)
  })
}
