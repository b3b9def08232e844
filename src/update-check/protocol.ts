// What the update-check's routes share: the game a request asks about, the
// question an answer answers (for its signature), and how the batch and
// by-hash answers go out (the exact bytes, their strong ETag, 304 while it
// still matches, the signatures on a 200).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { BadRequest } from '../errors.js'
import type { GameQuery } from '../minecraft/releases.js'
import { noneMatch } from '../http/conditional.js'
import { receivedJsonBody } from '../http/json-body.js'
import { SIGNATURE_HEADER } from '../api/signing.js'
import { answeredRequest, checkRequestDigest, type AnsweredRequest, type MessageSignature } from '../signing/message-signature.js'
import type { Signable, Signer } from '../signing/service.js'

/**
 * The question a request asks, as its answer's signature covers it: method,
 * raw path and query, and for a body, the Content-Digest the client sent,
 * once it is checked against the bytes received (a mismatch is a 400: the
 * body changed on the way, or the client computed it wrong).
 */
export function questionOf(request: FastifyRequest): AnsweredRequest {
  const raw = request.headers['content-digest']
  // Node joins a repeated field into one value with ", ", as RFC 9110 §5.3 combines them.
  const field = Array.isArray(raw) ? raw.join(', ') : raw
  let digest: string | undefined
  if (field !== undefined) {
    const body = receivedJsonBody(request)
    const check = body === undefined ? 'none' : checkRequestDigest(field, body)
    if (check === 'mismatch') throw new BadRequest('the Content-Digest header does not match the request body')
    if (check === 'matches') digest = field.trim()
  }
  return answeredRequest(request.method, request.url, digest)
}

/** Sets a signed 200's RFC 9421 fields. */
export function setMessageSignature(reply: FastifyReply, signature: MessageSignature): FastifyReply {
  return reply.header('content-digest', signature.contentDigest)
    .header('signature-input', signature.signatureInput)
    .header('signature', signature.signature)
}

/**
 * These are queries that change nothing, so a POST among them is answered
 * like a GET: If-None-Match gets 304 (as the HTTP QUERY method allows), not
 * the 412 RFC 9110 gives other unsafe methods. A batch is rarely asked twice
 * with the same body and origin within the cache, so it is signed per request.
 */
export function sendSignedJson(signer: Signer, request: FastifyRequest, reply: FastifyReply, answer: { body: string; etag: string }): FastifyReply {
  // Checked before anything is sent: a body that does not match its digest is a 400 even when the ETag matches.
  const question = questionOf(request)
  reply.header('etag', answer.etag).header('cache-control', 'no-cache')
  if (noneMatch(request.headers['if-none-match'], answer.etag)) return reply.code(304).send(undefined)
  setMessageSignature(reply, signer.messageSignature(question, answer.body))
  return reply.header(SIGNATURE_HEADER, signer.header(answer.body)).type('application/json; charset=utf-8').send(answer.body)
}

/** A cached answer's signatures: the legacy body signature and the RFC 9421 one, each reused while it may be. */
export function signCached(signer: Signer, request: FastifyRequest, reply: FastifyReply, answer: Signable): FastifyReply {
  setMessageSignature(reply, signer.messageSignatureFor(answer, questionOf(request)))
  return reply.header(SIGNATURE_HEADER, signer.headerFor(answer))
}

/** pack_format or game_version (docs/update-protocol.md), not both. */
export function gameOf(query: { pack_format?: number | undefined; game_version?: string | undefined }): GameQuery | undefined {
  const { pack_format: packFormat, game_version: release } = query
  if (packFormat !== undefined && release !== undefined) throw new BadRequest('give pack_format or game_version, not both')
  return packFormat !== undefined ? { packFormat } : release !== undefined ? { release } : undefined
}
