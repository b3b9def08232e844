import type { FastifyRequest } from 'fastify'

/** Under /api/ every answer is JSON (docs/decisions.md#errors); elsewhere a browser may get pages. */
export function isApiRequest(request: FastifyRequest): boolean {
  return request.url === '/api' || request.url.startsWith('/api/') || request.url.startsWith('/api?')
}

/** Whether an answer outside /api/ should be a page: the caller is a browser asking for HTML. */
export function wantsPage(request: FastifyRequest): boolean {
  return !isApiRequest(request) && (request.headers.accept ?? '').includes('text/html')
}
