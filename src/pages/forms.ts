// What the account and gate forms share: a failed post answers with the same
// form again, the reason above it, under the error's status.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { PasswordWorkBusy } from '../auth/password-work.js'
import { DomainError, TooManyRequests } from '../errors.js'
import type { App } from '../http/types.js'
import type { SafeHtml } from '../web/html.js'
import { sendPage } from '../web/respond.js'

/** A failed form post: the same form again, with the reason, under the error's status. Other errors are thrown on. */
export function formFailure(
  app: App, request: FastifyRequest, reply: FastifyReply, error: unknown, title: string, form: (message: string) => SafeHtml,
): FastifyReply {
  if (!(error instanceof DomainError)) throw error
  if (error instanceof TooManyRequests) reply.header('retry-after', String(error.retryAfterSeconds))
  const message = error instanceof PasswordWorkBusy
    ? 'The server is busy checking other passwords. Try again in a moment.'
    : error instanceof TooManyRequests
      ? `Too many failed attempts. Try again in ${error.retryAfterSeconds} seconds.`
      : error.detail.charAt(0).toUpperCase() + error.detail.slice(1) + '.'
  return sendPage(app, request, reply, { title, body: form(message), narrow: true }, error.status)
}

/** A sign-in form posted by a script (fetch with JSON) gets JSON answers, errors included; a browser form gets pages. */
export function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').startsWith('application/json')
}
