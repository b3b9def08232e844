import type { FastifyRequest } from 'fastify'
import type { Config } from '../config.js'

/** The public origin: PACKS_BASE_URL when set, else the request's own scheme and Host. */
export function publicOrigin(config: Config, request: FastifyRequest): string {
  return config.baseUrl ?? `${request.protocol}://${request.host}`
}

/** URL of a stored file; absolute only when PACKS_BASE_URL is set (CONTRACT §4, uploads). */
export function fileUrl(config: Config, fileId: string): string {
  return `${config.baseUrl ?? ''}/api/files/${fileId}/`
}

/** Always-absolute download URL of a stored file, for the in-game updater (CONTRACT §4, update-check). */
export function downloadUrl(config: Config, request: FastifyRequest, fileId: string): string {
  return `${publicOrigin(config, request)}/api/files/${fileId}/?download=1`
}

/** Only same-site paths are followed after a form, so `next` cannot send people elsewhere. */
export function safeNext(next: unknown, fallback = '/'): string {
  if (typeof next !== 'string' || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return fallback
  return next
}
