// The access log: one line per request, on by default (a production site
// needs one), cheap enough to leave on. Fastify's own request logging writes
// two lines per request through a child logger's serializers, synchronously;
// at the update-check's rate that was three quarters of the server's time
// (15.7k req/s against 67.8k for a bare node:http server). This writes one
// line, built by hand in pino's JSON shape (level 30, time, msg), into the
// logger's own asynchronous destination, so lines from the access log and
// from the rest of the server stay in order in one stream.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { App } from './types.js'

/** Where the lines go: the logger's destination (a SonicBoom that writes without blocking). */
export interface LineSink {
  write(line: string): unknown
}

/** A file link's signature is a capability (src/modrinth/file-links.ts): it never reaches the log. Linear: one class, no nesting. */
const SIGNATURE_PARAMETER = /([?&]signature=)[^&#]*/g
/**
 * A feed token (src/auth/feed-tokens.ts) opens a user's feeds: it never reaches the log either. Also when
 * percent-encoded once or twice inside another parameter, as the gate's `next=` carries the address it came
 * from (there the value ends at the encoded "&"). Only the plain `feed_token=<token>` is accepted
 * (src/auth/plugin.ts), so every token that works is caught. Linear: fixed alternatives, then one class.
 */
const FEED_TOKEN_PARAMETER = /(feed(?:_|%5F)token(?:=|%(?:25)?3D))([^&#]*)/gi

function redactFeedToken(_match: string, name: string, value: string): string {
  const end = name.endsWith('=') ? -1 : value.indexOf('%')
  return `${name}[redacted]${end < 0 ? '' : value.slice(end)}`
}

/** The URL as a log line may show it: capabilities replaced by "[redacted]". */
export function redactUrl(rawUrl: string): string {
  let url = rawUrl.includes('signature=') ? rawUrl.replace(SIGNATURE_PARAMETER, '$1[redacted]') : rawUrl
  // A substring test first: the update-check's fast path logs tens of thousands of URLs a second.
  if (url.includes('token')) url = url.replace(FEED_TOKEN_PARAMETER, redactFeedToken)
  return url
}

export function accessLine(request: FastifyRequest, reply: FastifyReply, now: number): string {
  return formatAccessLine(request.id, request.method, request.url, reply.statusCode, reply.elapsedTime, request.ip, now)
}

/** The line itself, for Fastify's requests and for the update-check's fast path (src/update-check/fast-path.ts). */
export function formatAccessLine(reqId: string, method: string, rawUrl: string, status: number, ms: number, ip: string | undefined, now: number): string {
  const url = redactUrl(rawUrl)
  // JSON.stringify escapes what the client sent (the URL; the address, which a trusted proxy's header may name);
  // the method was checked by Node's parser and the id is Fastify's own.
  return `{"level":30,"time":${now},"msg":"request","reqId":"${reqId}","method":"${method}","url":${JSON.stringify(url)},`
    + `"status":${status},"ms":${ms.toFixed(2)},"ip":${JSON.stringify(ip ?? '')}}\n`
}

export function installAccessLog(app: App, sink: LineSink): void {
  app.addHook('onResponse', (request, reply, done) => {
    sink.write(accessLine(request, reply, Date.now()))
    done()
  })
}
