// What the update-check's routes share: the game a request asks about, and
// how the batch and by-hash answers go out (the exact bytes, their strong
// ETag, 304 while it still matches, the Packs-Signature header on a 200).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BadRequest } from '../errors.js'
import type { GameQuery } from '../minecraft/releases.js'
import { noneMatch } from '../http/conditional.js'
import { SIGNATURE_HEADER } from '../api/signing.js'
import type { Signer } from '../signing/service.js'

/**
 * These are queries that change nothing, so a POST among them is answered
 * like a GET: If-None-Match gets 304 (as the HTTP QUERY method allows), not
 * the 412 RFC 9110 gives other unsafe methods. A batch is rarely asked twice
 * with the same body and origin within the cache, so it is signed per request.
 */
export function sendSignedJson(signer: Signer, request: FastifyRequest, reply: FastifyReply, answer: { body: string; etag: string }): FastifyReply {
  reply.header('etag', answer.etag).header('cache-control', 'no-cache')
  if (noneMatch(request.headers['if-none-match'], answer.etag)) return reply.code(304).send(undefined)
  return reply.header(SIGNATURE_HEADER, signer.header(answer.body)).type('application/json; charset=utf-8').send(answer.body)
}

/** pack_format or game_version (docs/update-protocol.md), not both. */
export function gameOf(query: { pack_format?: number | undefined; game_version?: string | undefined }): GameQuery | undefined {
  const { pack_format: packFormat, game_version: release } = query
  if (packFormat !== undefined && release !== undefined) throw new BadRequest('give pack_format or game_version, not both')
  return packFormat !== undefined ? { packFormat } : release !== undefined ? { release } : undefined
}
