// The Host header, checked once at the edge. Without PACKS_BASE_URL the
// request's host becomes part of absolute URLs (the update-check's
// download_url, a pack page's download links) and of the update-check cache's
// key, so it must be a real host: a 12 KB Host used to be echoed into
// download_url and cached per value.
//
// The check is a length test and one scan over a table, no regular
// expression: it runs on every request, the update-check included.
import type { FastifyReply } from 'fastify'
import type { Socket } from 'node:net'
import { isIPv6 } from 'node:net'
import type { App } from './types.js'

/** A DNS name is at most 253 characters; with a port it stays under this. */
const MAX_HOST_LENGTH = 255

/** Characters of a host name or IPv4 address: letters, digits, '-', '.', '_' (seen in internal names). */
const NAME_CHAR = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c)
  if (/[A-Za-z0-9._-]/.test(ch)) NAME_CHAR[c] = 1
}
/** Characters inside "[...]": an IPv6 address, possibly ending in a dotted IPv4 part. */
const IPV6_CHAR = new Uint8Array(128)
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c)
  if (/[0-9A-Fa-f:.]/.test(ch)) IPV6_CHAR[c] = 1
}

const COLON = 0x3a
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/**
 * `host [":" port]` with host a DNS-style name, an IPv4 address or a bracketed
 * IPv6 address (RFC 9110 §7.2, RFC 3986 §3.2.2), at most MAX_HOST_LENGTH
 * characters. Stricter than RFC 3986's reg-name, which also admits
 * percent-escapes and sub-delimiters (`'`, `(`, `;`, ...) no real host has and
 * nothing should paste into a URL.
 */
export function isValidHost(host: string): boolean {
  const length = host.length
  if (length === 0 || length > MAX_HOST_LENGTH) return false
  let i = 0
  if (host.charCodeAt(0) === OPEN_BRACKET) {
    i = 1
    while (i < length) {
      const c = host.charCodeAt(i)
      if (c === CLOSE_BRACKET) break
      if (c >= 128 || IPV6_CHAR[c] === 0) return false
      i++
    }
    if (i === length || !isIPv6(host.slice(1, i))) return false
    i++
  } else {
    while (i < length) {
      const c = host.charCodeAt(i)
      if (c === COLON) break
      if (c >= 128 || NAME_CHAR[c] === 0) return false
      i++
    }
    if (i === 0) return false
  }
  if (i === length) return true
  if (host.charCodeAt(i) !== COLON) return false
  const portStart = ++i
  let port = 0
  while (i < length) {
    const digit = host.charCodeAt(i) - 0x30
    if (digit < 0 || digit > 9 || i - portStart >= 5) return false
    port = port * 10 + digit
    i++
  }
  return i > portStart && port <= 65535
}

/** Node's own 400 for a missing Host has no body; host.ts answers it with a `detail` instead. */
export const hostServerOptions = { requireHostHeader: false } as const

/**
 * Refuses a request whose effective host (the Host header, or X-Forwarded-Host
 * from a trusted proxy) is not a valid host, with 400 and `{detail}` (RFC 9112
 * §3.2: also an HTTP/1.1 request without Host). An HTTP/1.0 request may omit
 * it; it then gets the address the client connected to.
 */
export function installHostCheck(app: App): void {
  const checkRawHost = app.config.trustProxy !== false
  app.addHook('onRequest', (request, reply, done) => {
    const host = request.host
    if (host === '') {
      if (request.raw.httpVersion === '1.0') {
        request.raw.headers.host = socketAuthority(request.raw.socket)
        return done()
      }
      return refuse(reply, 'the Host header is required')
    }
    if (!isValidHost(host)) return refuse(reply, 'the Host header is not a valid host[:port]')
    // Behind a trusted proxy the effective host may come from X-Forwarded-Host; the Host it sent is held to the same rule.
    if (checkRawHost) {
      const raw = request.headers.host
      if (raw !== undefined && raw !== host && !isValidHost(raw)) return refuse(reply, 'the Host header is not a valid host[:port]')
    }
    done()
  })
}

function refuse(reply: FastifyReply, detail: string): void {
  // Nothing else is read from this client's connection: whatever it sends next is as suspect.
  void reply.code(400).header('connection', 'close').type('application/json; charset=utf-8').send({ detail })
}

/** host:port of the local end of the connection, the address an HTTP/1.0 client without Host reached. */
function socketAuthority(socket: Socket | null | undefined): string {
  let address = socket?.localAddress ?? '127.0.0.1'
  if (address.startsWith('::ffff:') && address.includes('.')) address = address.slice('::ffff:'.length)
  const port = socket?.localPort
  const name = address.includes(':') ? `[${address.split('%')[0]}]` : address
  return port === undefined ? name : `${name}:${port}`
}
