// The JSON body parser of the whole app: Fastify's own (empty body, invalid
// JSON and __proto__ / constructor.prototype keys are 400s, the body limit a
// 413), behind a linear scan that refuses deep nesting. JSON.parse itself
// copes with any depth, but what later walks the value recursively does not:
// JSON.stringify of a draft nested 5,000 levels deep overflowed the stack.
import type { FastifyRequest } from 'fastify'
import { BadRequest } from '../errors.js'
import type { App } from './types.js'

/** Far deeper than any form of ours (a draft's data is two levels); deep enough for free-form members. */
export const MAX_JSON_DEPTH = 64

/** The raw JSON bodies of requests that carried a Content-Digest, until the request is collected. */
const receivedBodies = new WeakMap<FastifyRequest, Buffer>()

/** The exact bytes of a JSON body whose request carried a Content-Digest field; undefined otherwise. */
export function receivedJsonBody(request: FastifyRequest): Buffer | undefined {
  return receivedBodies.get(request)
}

export function installJsonBodyParser(app: App): void {
  // The same secure-json-parse settings Fastify would use: its defaults ('error') unless the instance says otherwise.
  const parseJson = app.getDefaultJsonParser(app.initialConfig.onProtoPoisoning ?? 'error', app.initialConfig.onConstructorPoisoning ?? 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer
    // A client that states its body's digest (RFC 9530) has it checked against these exact bytes, where a route asks.
    if (request.headers['content-digest'] !== undefined) receivedBodies.set(request, bytes)
    const text = bytes.toString('utf8')
    if (jsonDeeperThan(text, MAX_JSON_DEPTH)) {
      done(new BadRequest(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`), undefined)
      return
    }
    // Fastify's own parser answers through `done` and returns nothing; its type also allows the promise style.
    // eslint-disable-next-line @typescript-eslint/no-floating-promises
    parseJson(request, text, done)
  })
}

/**
 * Whether arrays and objects in JSON text nest deeper than `limit`. One pass,
 * no recursion: brackets inside strings do not count, and a backslash escapes
 * the character after it (so `"\""` stays one string). Text that is not JSON
 * gets some answer here and is refused by JSON.parse right after.
 */
export function jsonDeeperThan(text: string, limit: number): boolean {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0x22) {
      // Skip the string: to the next quote that no backslash escapes.
      for (i++; i < text.length; i++) {
        const inner = text.charCodeAt(i)
        if (inner === 0x5c) i++
        else if (inner === 0x22) break
      }
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true
    } else if (code === 0x5d || code === 0x7d) {
      depth--
    }
  }
  return false
}
