// The update-check's fast path. Every player's game asks on every start, so
// this one request decides what the site costs. Through Fastify it runs nine
// hooks (security headers, host, timeouts, auth, text input, CSRF, metrics,
// access log, cookies), schema validation and the reply's machinery: about
// four times the work of the bare node:http server it is measured against.
//
// This answers the common case before Fastify sees the request, with exactly
// the bytes and headers the route would send: a GET of
// /api/packs/{namespace}/{pack_id}/latest, no query, no body, no cookie or
// Authorization, the right X-Master-Password for a client the failure limit
// does not block, a cached answer that is current. Anything else (a wrong or
// unverified password, a miss, a variant, HEAD, a percent-escape, behind a
// proxy without PACKS_BASE_URL, Redis not confirmed current) returns false and
// Fastify handles the request as always. It records the request in the
// statistics and the access log as the route would.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { performance } from 'node:perf_hooks'
import type { Config } from '../config/index.js'
import type { Gate } from '../auth/gate.js'
import type { AttemptLimiter } from '../auth/limiter.js'
import { clientKey } from '../auth/addresses.js'
import { SIGNATURE_HEADER } from '../api/signing.js'
import { noneMatch } from '../http/conditional.js'
import { isValidHost } from '../http/host.js'
import { formatAccessLine, type LineSink } from '../http/access-log.js'
import type { Signer } from '../signing/service.js'
import { answeredRequest } from '../signing/message-signature.js'
import type { RouteMetrics } from '../stats/metrics.js'
import { packKey, type UpdateCheckCache } from './cache.js'

const PREFIX = '/api/packs/'
const SUFFIX = '/latest'
/** The route's key in the statistics, as the 'auth' plugin names it for Fastify's requests. */
const ROUTE_KEY = `GET ${PREFIX}:namespace/:pack_id${SUFFIX}`
const JSON_TYPE = 'application/json; charset=utf-8'

export interface FastPathDeps {
  config: Config
  gate: Gate
  limiter: AttemptLimiter
  cache: UpdateCheckCache
  signing: Signer
  metrics: RouteMetrics
  /** The headers every response carries (src/app.ts). */
  securityHeaders: Readonly<Record<string, string>>
  /** The access log's sink, when the access log is on. */
  accessLog: LineSink | undefined
}

/** A request handler that answers and returns true, or returns false having written nothing; `served` counts the first. */
export type FastPath = ((request: IncomingMessage, response: ServerResponse) => boolean) & { readonly served: () => number }

export function createUpdateCheckFastPath(deps: FastPathDeps): FastPath {
  const { config, gate, limiter, cache, signing, metrics, securityHeaders, accessLog } = deps
  // Behind a trusted proxy the origin comes from its headers, which only Fastify's trust rules may read.
  const fixedOrigin = config.baseUrl
  if (fixedOrigin === null && config.trustProxy !== false) return Object.assign(() => false, { served: () => 0 })
  // The security headers but cache-control, which the update-check sets itself.
  const staticHeaders = Object.entries(securityHeaders).filter(([name]) => name !== 'cache-control').flat()
  let served = 0

  const fastPath = (request: IncomingMessage, response: ServerResponse): boolean => {
    if (request.method !== 'GET') return false
    const url = request.url!
    // No query (a variant, or anything unusual) and no trailing slash: those go through Fastify.
    if (!url.startsWith(PREFIX) || !url.endsWith(SUFFIX)) return false
    const fields = readFields(request.rawHeaders)
    if (fields === undefined) return false
    const password = fields.password
    const start = performance.now()
    const names = url.slice(PREFIX.length, url.length - SUFFIX.length)
    const slash = names.indexOf('/')
    // Exactly two segments, no percent-escape (Fastify decodes those; a cached key never has one).
    if (slash <= 0 || slash === names.length - 1 || names.indexOf('/', slash + 1) !== -1 || names.includes('%')) return false
    let origin = fixedOrigin
    if (origin === null) {
      const host = fields.host
      if (host === undefined || !isValidHost(host)) return false
      // The server speaks plain HTTP (TLS ends at a proxy, which is what PACKS_BASE_URL or PACKS_TRUST_PROXY is for).
      origin = `http://${host}`
    }
    if (gate.verifyPasswordSync(password) !== true) return false
    const ip = request.socket.remoteAddress
    // A client blocked for failed attempts gets 429 even with the right password: Fastify says so.
    if (limiter.blockedNow?.(clientKey(ip)) !== 0) return false
    const key = packKey(names.slice(0, slash).toLowerCase(), names.slice(slash + 1).toLowerCase())
    // With Redis, only while invalidations are known to arrive (src/shared-state/redis-update-check-cache.ts).
    if (cache.revalidate !== undefined && cache.currentWithoutAsking?.() !== true) return false
    const answer = cache.get(key, origin)
    if (answer == null || answer.noVersion) return false

    // Flat [name, value, ...] lists, built once per answer and signature (a new key, a new half of the signature's
    // lifetime, another spelling of the path): writeHead takes them as they are.
    const signature = signing.headerFor(answer)
    const message = signing.messageSignatureFor(answer, answeredRequest('GET', url))
    if (answer.fieldsFor !== message.signature) {
      answer.fields = [
        ...staticHeaders,
        'etag', answer.etag,
        'cache-control', 'no-cache',
        'content-digest', message.contentDigest,
        'signature-input', message.signatureInput,
        'signature', message.signature,
        SIGNATURE_HEADER, signature,
        'content-type', JSON_TYPE,
        'content-length', String(Buffer.byteLength(answer.body)),
      ]
      // No content, so no Content-Length (as the route: a 304 has no body).
      answer.notModifiedFields = [...staticHeaders, 'etag', answer.etag, 'cache-control', 'no-cache']
      answer.fieldsFor = message.signature
    }
    let status: number
    if (noneMatch(fields.ifNoneMatch, answer.etag)) {
      status = 304
      response.writeHead(304, answer.notModifiedFields)
      response.end()
    } else {
      status = 200
      response.writeHead(200, answer.fields)
      response.end(answer.body)
    }
    const ms = performance.now() - start
    metrics.record(ROUTE_KEY, ms, status)
    served++
    accessLog?.write(formatAccessLine(`req-f${served.toString(36)}`, 'GET', url, status, ms, ip, Date.now()))
    return true
  }
  return Object.assign(fastPath, { served: () => served })
}

/** The header fields the fast path reads. */
interface Fields {
  password: string
  host: string | undefined
  ifNoneMatch: string | undefined
}

/**
 * The fields from the parser's [name, value, ...] list, or undefined when the
 * request is Fastify's: no X-Master-Password, a credential of another kind, a
 * body, or one of these fields twice (Node would join or drop the copies;
 * Fastify decides). Not `request.headers`: Node builds that object on first
 * read, one property at a time through a keyed store that the many header sets
 * of other requests have made megamorphic, V8's slow path. On the update-check
 * that object cost more than the rest of the fast path's own work.
 */
function readFields(raw: string[]): Fields | undefined {
  let password: string | undefined
  let host: string | undefined
  let ifNoneMatch: string | undefined
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    // Field names are compared only when their length could match: most are skipped on that alone.
    switch (name.length) {
      case 4:
        if (!is(name, 'host')) break
        if (host !== undefined) return undefined
        host = raw[i + 1]
        break
      case 6:
        if (is(name, 'cookie')) return undefined
        break
      case 13:
        if (is(name, 'authorization')) return undefined
        if (!is(name, 'if-none-match')) break
        if (ifNoneMatch !== undefined) return undefined
        ifNoneMatch = raw[i + 1]
        break
      case 14:
        if (is(name, 'content-length')) return undefined
        break
      case 17:
        if (is(name, 'transfer-encoding')) return undefined
        if (!is(name, 'x-master-password')) break
        if (password !== undefined) return undefined
        password = raw[i + 1]
        break
    }
  }
  return password === undefined ? undefined : { password, host, ifNoneMatch }
}

/** Case-insensitive equality with a lower-case name of the same length. */
function is(name: string, lower: string): boolean {
  return name === lower || name.toLowerCase() === lower
}
