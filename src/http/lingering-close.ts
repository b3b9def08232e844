// A refused upload is answered, not reset. When the server refuses a request
// before reading its body (a 401 on a bad token, a 404 for someone else's
// pack, a 413 over the limit), the rest of the body is still coming; closing
// the connection at once, with those bytes unread, makes the kernel send a TCP
// reset, and a client still writing its body (Node's fetch, curl) gets EPIPE
// or ECONNRESET instead of the answer (measured: 8 of 8 tries with a 20 MiB
// upload). RFC 9112 §9.6 says how to close instead: send the answer, close
// the sending side, and keep reading and discarding what arrives for a while
// ("lingering close", as nginx's lingering_close does), so the client reads the
// answer before the connection goes.
//
// Bounded, so a refused client cannot hold a connection or cost much: the
// connection is closed when the body has been read to its end, after
// LINGER_UPLOADS times the largest upload the site accepts was discarded,
// after LINGER_MS in all, or after LINGER_IDLE_MS without a byte (a client
// that stopped sending once it saw the answer). Nothing is kept: each chunk
// is dropped as it arrives. The byte bound is that large because Node's fetch
// (undici) reads the answer only once it has sent its whole body: cut off
// sooner (after 64 MiB of a 200 MiB upload), it still reports EPIPE, and a
// 413 is for a body larger than the limit. The time bound (nginx's
// lingering_time) is what holds on a slow link.
import type { IncomingMessage } from 'node:http'
import { Socket } from 'node:net'

/** The most a refused body is read for, in all: nginx's lingering_time. */
export const LINGER_MS = 30_000
/** A client that sends nothing for this long has stopped: nginx's lingering_timeout. */
export const LINGER_IDLE_MS = 5_000
/** How many of the largest upload a refused body may hold before the connection is cut. */
export const LINGER_UPLOADS = 4

type LingeringSocket = Socket & { packsLingering?: true }

/**
 * Call when answering `request` before its body was read, with Connection:
 * close: once the answer has gone out, the connection half-closes and reads
 * the rest of the body into nothing, at most `maxBytes` of it and within the
 * times above, then closes.
 */
export function lingerAfterAnswer(request: IncomingMessage, maxBytes: number): void {
  // Only a real connection (app.inject's requests have a stand-in, with nothing to reset).
  if (!(request.socket instanceof Socket)) return
  const socket = request.socket as LingeringSocket
  if (socket.destroyed || socket.packsLingering) return
  socket.packsLingering = true
  // Node's server ends a Connection: close response with socket.destroySoon(): end, then destroy as soon as the
  // answer is flushed, with the body unread. Here it only ends (sends FIN after the answer); reading goes on.
  socket.destroySoon = function endOnly(this: Socket) {
    this.end()
  }
  let discarded = 0
  let idle: NodeJS.Timeout | undefined
  const close = () => {
    clearTimeout(idle)
    clearTimeout(deadline)
    socket.destroy()
  }
  const deadline = setTimeout(close, LINGER_MS)
  deadline.unref()
  const heard = () => {
    clearTimeout(idle)
    idle = setTimeout(close, LINGER_IDLE_MS)
    idle.unref()
  }
  heard()
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length
    if (discarded > maxBytes) close()
    else heard()
  })
  // The whole body is read: nothing is left to reset the connection with.
  request.once('end', close)
  request.once('error', close)
  socket.once('close', () => {
    clearTimeout(idle)
    clearTimeout(deadline)
  })
  // A form reader may still be piped from the request, stopped by its own error: its back-pressure would stop
  // the reading here too.
  request.unpipe()
  request.resume()
}
