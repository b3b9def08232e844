// The one place where errors become responses. Every error under /api/ is
// JSON `{ "detail": "..." }`; a 401 always carries WWW-Authenticate; a 5xx
// never shows an internal message.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { DomainError, ServiceUnavailable, TooManyRequests, databaseUnavailable } from '../errors.js'
import type { App } from './types.js'
import { wantsPage } from './request-kind.js'
import { LINGER_UPLOADS, lingerAfterAnswer } from './lingering-close.js'

export const WWW_AUTHENTICATE = 'Bearer realm="packs", charset="UTF-8"'

/** How a browser navigating to a page is shown an error: the site's rendering (src/web/respond.ts) gives it. */
export type ErrorPage = (request: FastifyRequest, reply: FastifyReply, status: number, detail: string) => FastifyReply

declare module 'fastify' {
  interface FastifyInstance {
    /** Set by installErrorHandling: errors outside /api/ as a page. */
    errorPage: ErrorPage
  }
}

export function sendError(reply: FastifyReply, status: number, detail: string): FastifyReply {
  if (status === 401) reply.header('www-authenticate', WWW_AUTHENTICATE)
  const request = reply.request
  // Refused before the whole body arrived (a 401 before an upload, a 413 mid-upload): the rest of it is still
  // unread on the connection, and the next request sent on that connection would wait behind it. Close it after
  // this answer, but only once the client can have read it (./lingering-close.ts).
  const hasBody = (request.headers['content-length'] ?? '0') !== '0' || request.headers['transfer-encoding'] !== undefined
  if (hasBody && !request.raw.complete) {
    reply.header('connection', 'close')
    const { uploadLimits } = (request.server as App).config
    lingerAfterAnswer(request.raw, LINGER_UPLOADS * Math.max(...Object.values(uploadLimits)))
  }
  // A browser navigating to a page gets the error as a page; everything else (all of /api/) gets JSON.
  if (wantsPage(request)) return (request.server as App).errorPage(request, reply, status, detail)
  return reply.code(status).type('application/json; charset=utf-8').send({ detail })
}

/** Fastify's and its plugins' own client errors, by code, with the status we answer. */
const CLIENT_ERROR_STATUS: Record<string, number> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 415,
  FST_ERR_CTP_BODY_TOO_LARGE: 413,
  FST_ERR_CTP_EMPTY_JSON_BODY: 400,
  FST_ERR_CTP_INVALID_JSON_BODY: 400,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 400,
  FST_INVALID_MULTIPART_CONTENT_TYPE: 400,
  FST_PARTS_LIMIT: 400,
  FST_FILES_LIMIT: 400,
  FST_FIELDS_LIMIT: 400,
  FST_REQ_FILE_TOO_LARGE: 413,
  FST_PROTO_VIOLATION: 400,
  FST_INVALID_JSON_FIELD_ERROR: 400,
}

export function installErrorHandling(app: App, errorPage: ErrorPage): void {
  app.decorate('errorPage', errorPage)
  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    const unavailable = asUnavailable(app, error)
    if (unavailable) {
      // The one log line of this failure; its real cause (SDK, fs or driver error) is err's cause.
      request.log.error({ err: unavailable }, unavailable.detail)
      reply.header('retry-after', String(unavailable.retryAfterSeconds))
      return sendError(reply, 503, unavailable.detail)
    }
    if (error instanceof DomainError) {
      if (error instanceof TooManyRequests) reply.header('retry-after', String(error.retryAfterSeconds))
      return sendError(reply, error.status, error.detail)
    }
    if (error.validation) {
      return sendError(reply, 400, `invalid ${error.validationContext ?? 'request'}: ${error.message.replace(/^(body|querystring|params|headers)\/?/, '')}`)
    }
    const mapped = CLIENT_ERROR_STATUS[error.code]
    const status = mapped ?? (error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500)
    if (status < 500) {
      return sendError(reply, status, clientMessage(error, status))
    }
    request.log.error({ err: error }, 'request failed')
    return sendError(reply, 500, 'internal server error')
  })

  // Fastify answers an unknown method on a known path with 404; we say 405 and
  // list the methods that path does answer, from a mirror of the route table.
  const mirror = FindMyWay({ ignoreTrailingSlash: true })
  const noop = () => {}
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    for (const method of methods) {
      if (!mirror.hasRoute(method as HTTPMethod, route.url)) mirror.on(method as HTTPMethod, route.url, noop)
    }
  })
  const probe: HTTPMethod[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!
    const allowed = probe.filter((m) => m !== request.method && mirror.find(m, path))
    if (allowed.length > 0) {
      reply.header('allow', allowed.join(', '))
      return sendError(reply, 405, `method ${request.method} is not allowed here; allowed: ${allowed.join(', ')}`)
    }
    return sendError(reply, 404, 'not found')
  })
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any hook or error
 * handler runs, answered in the API's { detail } shape too. An over-long or
 * undecodable path parameter names nothing that exists (a malformed id is
 * 404: docs/decisions.md#paths-and-ids); anything else (an async constraint
 * that failed) is our fault, so it is logged like any other 500.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH' || error.code === 'FST_ERR_BAD_URL') {
    void sendError(reply, 404, 'not found')
    return
  }
  request.log.error({ err: error }, 'request failed')
  void sendError(reply, 500, 'internal server error')
}

/** A backend that cannot answer now is a 503 the client may retry, never a bare 500. */
function asUnavailable(app: App, error: unknown): ServiceUnavailable | undefined {
  if (error instanceof ServiceUnavailable) return error
  // Redis first: its client errors are typed, while a bare socket error is most likely the database's.
  if (app.sharedStateUnavailable(error)) return new ServiceUnavailable('a shared service is unavailable, try again', { cause: error })
  if (databaseUnavailable(error)) return new ServiceUnavailable('the database is unavailable, try again', { cause: error })
  return undefined
}

function clientMessage(error: FastifyError, status: number): string {
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') return 'request body is not valid JSON'
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return 'request body is empty but content-type is application/json'
  if (error.code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') return 'expected a multipart/form-data request'
  if (error.code === 'FST_PARTS_LIMIT' || error.code === 'FST_FIELDS_LIMIT') return 'too many parts in the multipart/form-data body'
  if (error.code === 'FST_FILES_LIMIT') return 'only one file may be sent per request'
  if (error.code === 'FST_INVALID_JSON_FIELD_ERROR') return 'a form field declared as JSON is not valid JSON'
  if (status === 413) return 'request body is too large'
  return error.message || 'bad request'
}

