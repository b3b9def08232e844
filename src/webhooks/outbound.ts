// The one HTTP client webhooks use. A webhook URL is chosen by a user and
// fetched by the server, so every request is held to these rules:
//   - https only, unless the admin allows http; no user name or password in
//     the URL (it would be sent as Basic credentials, and shown in logs);
//   - the address connected to must be one addresses.ts allows. A URL's host
//     is checked when the webhook is saved (checkWebhookUrl) and again at
//     every connection: node's `lookup` option is replaced by one that
//     resolves, refuses the whole answer if any address in it is refused, and
//     hands the connection only the addresses it checked. So a name that
//     resolved to a public address when it was saved and to 127.0.0.1 now
//     (DNS rebinding) is refused at connect time. `lookup` is not called for
//     a host that is an IP address, so those are judged directly;
//   - host names an admin allowed (allowHosts) skip the address check: that
//     is how a site reaches a receiver on its own network, and how the tests
//     reach theirs on loopback;
//   - redirects are never followed: a 3xx is an outcome like any other (the
//     Standard Webhooks specification counts it as a failure, and following
//     one would lead to a URL nobody checked);
//   - one timer covers the whole request, from the DNS lookup through
//     connecting, TLS, the answer's headers and its body (10 s by default);
//   - at most the first 64 KiB of the answer are read; then the connection is
//     closed, so memory stays bounded whatever the receiver sends;
//   - error messages are made from error codes, never from the URL: its path
//     or query often is the secret (a Discord webhook URL holds its token).
// Every request gets a connection of its own (no agent), so it is always
// made to an address checked for this request.
import dns from 'node:dns'
import type { LookupAddress, LookupAllOptions, LookupOptions } from 'node:dns'
import http from 'node:http'
import https from 'node:https'
import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import type { LookupFunction } from 'node:net'
import { refusedAddress } from './addresses.js'

/** Sent with every request, so a receiver's logs say who is calling. */
export const USER_AGENT = 'Packs-Webhooks/1'
export const DEFAULT_TIMEOUT_MS = 10_000
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024

export interface OutboundPolicy {
  /** Whether http: URLs are allowed besides https: (an admin's choice). */
  allowHttp: boolean
  /** Lower-case host names (or IP addresses) an admin allowed to be internal: they skip the address check. */
  allowHosts: ReadonlySet<string>
  /** For the whole request, body included; DEFAULT_TIMEOUT_MS when not given. */
  timeoutMs?: number
  /** How much of the answer is read; DEFAULT_MAX_RESPONSE_BYTES when not given. */
  maxResponseBytes?: number
  /** Ends the request at once when it fires (the server is shutting down). */
  signal?: AbortSignal
}

export interface DeliveryRequest {
  url: string
  body: string | Buffer
  /** Sent as given (Content-Type, the signature headers); User-Agent is added when absent, Content-Length always. */
  headers: Readonly<Record<string, string>>
}

export interface DeliveryOutcome {
  /** The answer's status, or null when none arrived. */
  status: number | null
  durationMs: number
  /** The first bytes of the answer (at most maxResponseBytes) as UTF-8, invalid bytes and NULs replaced by U+FFFD. */
  response: string
  /** Whether the answer was longer than what was read. */
  truncated: boolean
  /** Why the request failed (refused, timed out, reset, TLS, ...), or null when a whole answer (or its first bytes) arrived. */
  error: string | null
}

/** Resolves a host name to all its addresses, as dns.lookup with `all: true` does; replaceable in tests. */
export type Resolver = (hostname: string, options: LookupAllOptions) => Promise<LookupAddress[]>

const systemResolver: Resolver = (hostname, options) => dns.promises.lookup(hostname, { ...options, all: true })

/** A lookup answer holding a refused address; its message names the reason, not the address. */
class RefusedAddressError extends Error {
  readonly code = 'EWEBHOOKREFUSED'
}

/** A URL's host as a connection and allowHosts name it: no IPv6 brackets, lower case, no trailing dot. */
function hostOf(url: URL): string {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  return host.toLowerCase().replace(/\.$/, '')
}

interface Target {
  url: URL
  host: string
  /** In allowHosts: no address check. */
  allowed: boolean
}

/** The URL parsed, or what is wrong with it as the end of a sentence whose subject is the URL. */
function parseTarget(raw: string, policy: OutboundPolicy): Target | string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return 'is not a valid URL'
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    return policy.allowHttp ? 'must start with https:// or http://' : 'must start with https://'
  }
  if (url.username !== '' || url.password !== '') return 'must not contain a user name or password'
  const host = hostOf(url)
  const allowed = policy.allowHosts.has(host)
  if (!allowed && isIP(host) !== 0) {
    const reason = refusedAddress(host)
    if (reason !== null) return `points to ${reason}`
  }
  return { url, host, allowed }
}

/**
 * What is wrong with a webhook URL, checked when it is saved: its form (see parseTarget) and every address its
 * host resolves to now. The end of a sentence whose subject is the URL ("must start with https://", "has a host
 * name that resolves to a private address"); null when it may be saved. deliver() checks again at every
 * connection, so passing here is not what keeps a request safe.
 */
export async function checkWebhookUrl(url: string, policy: OutboundPolicy, resolve: Resolver = systemResolver): Promise<string | null> {
  const target = parseTarget(url, policy)
  if (typeof target === 'string') return target
  if (target.allowed || isIP(target.host) !== 0) return null
  let addresses: LookupAddress[]
  try {
    addresses = await resolve(target.host, { all: true })
  } catch (error) {
    return `has a host name that ${lookupFault(error)}`
  }
  if (addresses.length === 0) return 'has a host name that was not found'
  for (const { address } of addresses) {
    const reason = refusedAddress(address)
    if (reason !== null) return `has a host name that resolves to ${reason}`
  }
  return null
}

function lookupFault(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOTFOUND' || code === 'ENODATA') return 'was not found'
  if (code === 'EAI_AGAIN') return 'could not be resolved just now (a temporary DNS failure)'
  return `could not be resolved${code ? ` (${code})` : ''}`
}

/**
 * A `lookup` for node:net and node:http that resolves with `resolve` and refuses the connection when any address
 * in the answer is refused (addresses.ts). Node calls it in two shapes: with `all: true` (what net.connect does
 * with autoSelectFamily, the default since Node 20) it answers the list; otherwise the first address and its
 * family. Either way only checked addresses reach the socket.
 */
export function screenedLookup(resolve: Resolver = systemResolver): LookupFunction {
  return lookupWith(resolve, true)
}

function lookupWith(resolve: Resolver, screen: boolean): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    resolve(hostname, { ...options, all: true }).then(
      (addresses) => {
        let failure: NodeJS.ErrnoException | null = null
        if (addresses.length === 0) failure = Object.assign(new Error('the host name was not found'), { code: 'ENOTFOUND' })
        for (const { address } of screen ? addresses : []) {
          const reason = refusedAddress(address)
          if (reason !== null) {
            failure = new RefusedAddressError(`the host resolves to ${reason}`)
            break
          }
        }
        // Outside the promise, so an exception in node's callback is not taken for a lookup failure.
        process.nextTick(() => {
          if (failure !== null) callback(failure, '')
          else if (options.all) callback(null, addresses)
          else callback(null, addresses[0]!.address, addresses[0]!.family)
        })
      },
      (error: NodeJS.ErrnoException) => process.nextTick(() => callback(error, '')),
    )
  }
}

/** A failed request in words, from its error code alone (see the top of this file). */
function describeError(error: NodeJS.ErrnoException): string {
  if (error instanceof RefusedAddressError) return error.message
  const code = error.code ?? ''
  switch (code) {
    case 'ECONNREFUSED': return 'the connection was refused'
    case 'ECONNRESET': return 'the connection was reset'
    case 'EPIPE': return 'the connection was closed while the request was being sent'
    case 'ETIMEDOUT': return 'connecting timed out'
    case 'ENOTFOUND':
    case 'ENODATA': return 'the host name was not found'
    case 'EAI_AGAIN': return 'the host name could not be resolved just now (a temporary DNS failure)'
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
    case 'EADDRNOTAVAIL': return 'the host could not be reached'
    case 'ERR_TLS_CERT_ALTNAME_INVALID': return 'the TLS certificate is not for this host'
    case 'CERT_HAS_EXPIRED': return 'the TLS certificate has expired'
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN': return 'the TLS certificate is self-signed'
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'UNABLE_TO_GET_ISSUER_CERT':
    case 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY': return 'the TLS certificate is not signed by a trusted authority'
    case 'ERR_INVALID_CHAR':
    case 'ERR_INVALID_HTTP_TOKEN': return 'a request header is not valid'
  }
  if (code.startsWith('HPE_')) return 'the answer was not valid HTTP'
  if (code === 'EPROTO' || /SSL|TLS|CERT/.test(code)) return `the TLS connection failed (${code})`
  return code ? `the request failed (${code})` : 'the request failed'
}

function seconds(ms: number): string {
  return `${ms / 1000} s`
}

/** Bytes as text: UTF-8 with replacement characters; a sequence cut at the limit is dropped; NUL, which PostgreSQL cannot store in text, becomes U+FFFD. */
function decode(bytes: Buffer, truncated: boolean): string {
  const text = new TextDecoder('utf-8').decode(bytes, { stream: truncated })
  return text.replaceAll('\u0000', '\uFFFD')
}

/**
 * Sends one webhook request (POST) under `policy` and reports what happened; never throws and never rejects.
 * The outcome has `error` set when no answer came (refused, timed out, reset, TLS) or the answer broke off;
 * a 3xx, 4xx or 5xx is a status with `error` null.
 */
export function deliver(request: DeliveryRequest, policy: OutboundPolicy, resolve: Resolver = systemResolver): Promise<DeliveryOutcome> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const target = parseTarget(request.url, policy)
  if (typeof target === 'string') {
    return Promise.resolve({ status: null, durationMs: elapsed(), response: '', truncated: false, error: `the URL ${target}` })
  }
  const timeoutMs = policy.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const limit = policy.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value
  headers['user-agent'] ??= USER_AGENT
  headers['content-length'] = String(body.length)

  return new Promise((resolveOutcome) => {
    const { url } = target
    let status: number | null = null
    let answer: IncomingMessage | null = null
    const chunks: Buffer[] = []
    let received = 0
    let truncated = false
    let settled = false
    let req: http.ClientRequest | null = null
    let timer: NodeJS.Timeout | undefined
    let stop: (() => void) | undefined

    const finish = (error: string | null) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      if (stop) policy.signal?.removeEventListener('abort', stop)
      // Closes the connection whatever state it is in; the error listeners below stay, so nothing is left unheard.
      req?.destroy()
      answer?.destroy()
      resolveOutcome({ status, durationMs: elapsed(), response: decode(Buffer.concat(chunks), truncated), truncated, error })
    }

    const client = url.protocol === 'https:' ? https : http
    try {
      req = client.request({
        protocol: url.protocol,
        hostname: target.host,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers,
        agent: false,
        lookup: lookupWith(resolve, !target.allowed),
      })
    } catch (error) {
      // A header value node refuses (a line break in it): nothing was sent.
      finish(describeError(error as NodeJS.ErrnoException))
      return
    }
    timer = setTimeout(() => {
      finish(status === null ? `no answer within ${seconds(timeoutMs)}` : `the answer did not finish within ${seconds(timeoutMs)}`)
    }, timeoutMs)
    stop = () => finish('the request was stopped (the sender is shutting down)')
    if (policy.signal?.aborted) stop()
    policy.signal?.addEventListener('abort', stop, { once: true })

    req.on('error', (error: NodeJS.ErrnoException) => finish(describeError(error)))
    req.on('response', (res) => {
      answer = res
      status = res.statusCode ?? null
      res.on('data', (chunk: Buffer) => {
        const room = limit - received
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room))
          received = limit
          truncated = true
          finish(null)
          return
        }
        chunks.push(chunk)
        received += chunk.length
      })
      res.on('end', () => finish(null))
      res.on('error', (error: NodeJS.ErrnoException) => finish(`the answer broke off: ${describeError(error)}`))
      res.on('close', () => finish(res.complete ? null : 'the answer broke off before its end'))
    })
    req.end(body)
  })
}
