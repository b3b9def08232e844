// Who sends a download's bytes once Packs has decided the answer (docs/decisions.md#stored-files): nginx,
// from the same disk (PACKS_ACCEL_REDIRECT), or the object store, through a short-lived presigned link
// (PACKS_S3_REDIRECT). What comes before stays Packs' alone: the gate, a signed link's check that its pack
// is not hidden, the download count, 304, 416, and every header of the answer. Without either setting, and
// for the rare request nginx would decide differently, this process sends the bytes itself (./send.ts).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from '../http/types.js'
import type { ByteRange } from '../storage/index.js'
import type { StoredFile } from './service.js'

/** Sends the answer handed off; the caller counts the download before. */
export type HandOff = (reply: FastifyReply) => FastifyReply

/**
 * The most digits a position nginx is given may have: nginx answers a position past 2^63 (19 digits) with
 * 416, where Packs reads it as "to the end" (RFC 9110 §14.1.2); such a header is sent by Packs.
 */
const NGINX_POSITION_DIGITS = 18

/**
 * Preconditions Packs does not act on (a download's bytes never change, so it sends them whatever these say).
 * nginx would judge them against its own view of the file (its modification time, no ETag) and could answer
 * 412 or 304 where Packs answers 200: such a request is sent by Packs.
 */
const PRECONDITIONS_NGINX_WOULD_JUDGE = ['if-match', 'if-unmodified-since', 'if-modified-since'] as const

/**
 * How this download's bytes leave, once the reply holds Packs' status and headers (200 or 206, ETag,
 * Content-Type, Content-Disposition…): a hand-off to nginx or to the object store, or null when this
 * process sends them.
 */
export async function handOffFor(app: App, request: FastifyRequest, reply: FastifyReply, file: StoredFile, range: ByteRange | null): Promise<HandOff | null> {
  const { accelRedirect, s3RedirectSeconds } = app.config.fileDelivery
  if (accelRedirect !== null && nginxDecidesAlike(request, range)) {
    const relative = await file.locate()
    if (relative !== undefined) return (answer) => accelRedirectAnswer(answer, accelRedirect + relative)
  }
  if (s3RedirectSeconds !== null) {
    const url = await file.presign({
      seconds: s3RedirectSeconds,
      contentDisposition: String(reply.getHeader('content-disposition')),
      contentType: String(reply.getHeader('content-type')),
    })
    if (url !== undefined) return (answer) => storeRedirectAnswer(answer, url)
  }
  return null
}

/**
 * nginx re-reads the request's Range and conditional headers after the redirect, and its answer must be the
 * one Packs decided: the whole file when there was no Range, the same single range when Packs honoured one.
 * A Range that Packs ignored (several ranges, a malformed one, an If-Range that no longer holds) nginx might
 * answer with 206, multipart/byteranges or 416, so Packs sends those itself, as it does the preconditions
 * above. nginx's location puts Packs' ETag and Last-Modified on its answer, so it judges If-Range as Packs did.
 */
function nginxDecidesAlike(request: FastifyRequest, range: ByteRange | null): boolean {
  if (PRECONDITIONS_NGINX_WOULD_JUDGE.some((name) => request.headers[name] !== undefined)) return false
  const header = request.headers.range
  if (header === undefined) return true
  // Packs parsed it, so it is "bytes=" and one range of digits: `first-last`, `first-` or `-suffix`.
  return range !== null && header.trim().slice('bytes='.length).split('-').every((digits) => digits.length <= NGINX_POSITION_DIGITS)
}

/**
 * No body: nginx serves `uri` from its internal location and computes the status (200 or 206),
 * Content-Length, Content-Range and Accept-Ranges from the file and the request. It keeps Content-Type,
 * Content-Disposition and Cache-Control from this answer; the location adds back ETag, Last-Modified and
 * the sandbox headers (docs/deploy.md, One machine behind nginx).
 */
function accelRedirectAnswer(reply: FastifyReply, uri: string): FastifyReply {
  for (const name of ['content-length', 'content-range', 'accept-ranges']) reply.removeHeader(name)
  return reply.code(200).header('x-accel-redirect', uri).send()
}

/**
 * 302 Found, as GitHub's release downloads answer with their object store's link: the file is, for now,
 * at the store, and every client follows a 302 of a GET with a GET (303 says "the result of your POST is
 * elsewhere", which a download is not). The client sends its Range to the store, which answers it. The
 * redirect is stored by no cache: the link stops working after its lifetime, and each download is to pass
 * the gate and be counted here.
 */
function storeRedirectAnswer(reply: FastifyReply, url: string): FastifyReply {
  for (const name of ['content-length', 'content-range', 'accept-ranges', 'content-type', 'content-disposition', 'etag', 'last-modified']) reply.removeHeader(name)
  return reply.code(302).header('location', url).header('cache-control', 'no-store').send()
}
