// Deadlines for slow clients (a body dripped one byte every
// 5 s to POST /gate/ was still open after 101 s). A connection that sends too
// slowly is closed, with a 408 and `{detail}` when nothing of a response has
// gone out yet.
//
//   headers   PACKS_HEADERS_TIMEOUT (15 s)   request line and headers: Node's headersTimeout
//   body      PACKS_BODY_TIMEOUT (30 s)      the whole body of a JSON or form request: a timer, below
//   upload    PACKS_UPLOAD_TIMEOUT (1 h)     the whole of any request: Node's requestTimeout. It is
//                                            global, so it is the longest deadline; uploads live under it
//   idle      PACKS_IDLE_TIMEOUT (60 s)      no byte either way while a request is open: the socket timeout
//                                            (a stalled upload ends here)
//   keep-alive PACKS_KEEPALIVE_TIMEOUT (65 s) between requests; longer than nginx's upstream keepalive_timeout
//                                            (60 s), so nginx never reuses a connection this end is closing.
//                                            (Node waits a second more than the Keep-Alive header says.)
//
// An aborted upload is the same event as a client going away: the request
// stream errors, and ingest removes the partial file or aborts the S3
// multipart upload (src/uploads/ingest.ts, src/storage/*).
import { STATUS_CODES, type ServerOptions, type ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config/index.js'
import { redactUrl } from './access-log.js'
import { hostServerOptions } from './host.js'
import type { App } from './types.js'

/** Node's own bookkeeping: the response the socket is writing now (its 'clientError' default uses it the same way). */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null }

/** Connection handling passed to Fastify(): Node's own deadlines, and `{detail}` on the errors Node raises itself. */
export function serverOptions(config: Config) {
  const { headersMs, uploadMs, idleMs, keepAliveMs } = config.timeouts
  const http: ServerOptions = {
    headersTimeout: headersMs,
    requestTimeout: uploadMs,
    // Node looks for expired headers and requests on this period (default 30 s, too coarse for a 15 s deadline).
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersMs / 4))),
    ...hostServerOptions,
  }
  return {
    http,
    connectionTimeout: idleMs,
    keepAliveTimeout: keepAliveMs,
    requestTimeout: uploadMs,
    clientErrorHandler,
  }
}

/**
 * The body deadline for everything but uploads, and the idle timeout's
 * answer. Requests without a body (every update-check) cost two header reads.
 */
export function installTimeouts(app: App): void {
  const { bodyMs, idleMs } = app.config.timeouts
  const bodyDetail = `the request body did not arrive within ${seconds(bodyMs)}`
  const idleDetail = `no data arrived for ${seconds(idleMs)}`

  app.addHook('onRequest', (request, reply, done) => {
    const headers = request.raw.headers
    const length = headers['content-length']
    if ((length === undefined || length === '0') && headers['transfer-encoding'] === undefined) return done()
    if (request.raw.complete || isUpload(request)) return done()
    const timer = setTimeout(expireBody, bodyMs, request, reply, bodyDetail)
    // Unref'd: the listening server keeps the process alive, and app.inject() in tests must not wait for it.
    timer.unref()
    const cancel = () => clearTimeout(timer)
    request.raw.once('end', cancel).once('close', cancel)
    done()
  })

  // With a listener here Node leaves the socket to us. The idle timeout is about the client: one that stopped
  // sending its request gets a 408, one that stopped reading its response (or sat idle) is closed. A request
  // that has all arrived and is still being worked on (a large publish, a slow store) is left to finish; the
  // timer starts again with the first byte of its answer.
  app.server.on('timeout', (socket: HttpSocket) => {
    const response = socket._httpMessage
    const request = response?.req
    if (request !== undefined && !request.complete) {
      app.log.info({ url: redactUrl(request.url ?? ''), remoteAddress: socket.remoteAddress }, 'request stalled; closing the connection')
      answerAndClose(socket, 408, idleDetail)
      return
    }
    if (response !== undefined && response !== null && !response.headersSent && !response.writableEnded) return
    socket.destroy()
  })
}

/**
 * Uploads stream for as long as the file takes (PACKS_UPLOAD_TIMEOUT, with the
 * idle timeout between bytes). Only a multipart body sent to a route that
 * takes files counts; anything else gets the short deadline.
 */
function isUpload(request: FastifyRequest): boolean {
  const type = request.raw.headers['content-type']
  if (type === undefined || type.length < 19 || type.slice(0, 19).toLowerCase() !== 'multipart/form-data') return false
  return request.routeOptions.schema?.consumes?.includes('multipart/form-data') === true
}

function expireBody(request: FastifyRequest, reply: FastifyReply, detail: string): void {
  const raw = request.raw
  const socket: unknown = raw.socket
  // app.inject() has no connection to close.
  if (raw.complete || raw.destroyed || !(socket instanceof Socket)) return
  request.log.info({ url: redactUrl(raw.url ?? '') }, 'request body too slow; closing the connection')
  if (reply.raw.headersSent) socket.destroy()
  else answerAndClose(socket, 408, detail)
}

/**
 * Writes an error response straight to the socket and closes it, as Node's
 * own 'clientError' default does: nothing more is read from a client that
 * broke a deadline, and the request stream sees the abort (so a half-stored
 * upload is removed). Only when no response has started on the socket.
 */
function answerAndClose(socket: HttpSocket, status: number, detail: string): void {
  const current = socket._httpMessage
  if (socket.writable && (current === undefined || current === null || !current.headersSent)) {
    const body = JSON.stringify({ detail })
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`
      + 'content-type: application/json; charset=utf-8\r\n'
      + 'x-content-type-options: nosniff\r\n'
      + `content-length: ${Buffer.byteLength(body)}\r\n`
      + 'connection: close\r\n\r\n'
      + body,
    )
  }
  socket.destroy()
}

/**
 * What Node reports before a request reaches Fastify: headers or request too
 * slow (408), headers too large (431), a request it cannot parse (400).
 * Fastify's default answers these with its own body shape; ours is `{detail}`.
 */
function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) {
    socket.destroy()
    return
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') answerAndClose(socket, 408, 'the request did not arrive in time')
  else if (error.code === 'HPE_HEADER_OVERFLOW') answerAndClose(socket, 431, 'the request headers are too large')
  else if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') answerAndClose(socket, 413, 'the chunk extensions are too large')
  else answerAndClose(socket, 400, 'malformed HTTP request')
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`
}
