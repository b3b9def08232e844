// A download's bytes from local disk, copied into a few buffers that are used
// again and again (docs/benchmarks.md, "Downloads"). Node's file stream makes a
// new buffer for every read (512 KiB here): at a few GB/s that is thousands of
// large allocations a second outside V8's heap, and V8 answers them with full
// collections that halved downloads. Here a download reads into a buffer from
// a shared pool, writes it to the response, and the buffer goes back to the
// pool only when the write's callback says the socket has taken its bytes:
// Node calls it once the chunk is handed to the operating system, or with an
// error once the connection is gone and nothing will read it again. (Whether
// the socket's queue looks empty, `writableLength`, is no such promise: on
// Node 26 a buffer reused on that sign was sent with another read's bytes.)
// Each download has at most two buffers out, one being sent while the next is
// read, so memory stays bounded by the number of downloads, as with streams.
import type { ServerResponse } from 'node:http'
import type { PositionalReader } from '../storage/types.js'

/** Bytes read and written at once: 512 KiB, what the stream path measured best with. */
export const CHUNK = 512 * 1024
/** Buffers one download has out at once: one on its way to the client while the next is read. */
const PER_DOWNLOAD = 2
/** Free buffers the pool keeps (16 MiB); more downloads at once allocate theirs and let them go after. */
const POOL_KEEP = 32

const pool: Buffer[] = []

function take(): Buffer {
  return pool.pop() ?? Buffer.allocUnsafeSlow(CHUNK)
}

function give(buffer: Buffer): void {
  if (pool.length < POOL_KEEP) pool.push(buffer)
}

/** A download whose first chunk is read: `send` writes it and the rest. */
export interface PreparedDownload {
  /**
   * Writes the bytes to `res` (its status and headers already written with writeHead) and ends it; closes the
   * reader. Resolves when the response has ended or the client has gone. A store that fails now, or a file
   * shorter than its row says, cuts the response off: its Content-Length then tells the client.
   */
  send(res: ServerResponse): Promise<void>
  /** Closes the reader without sending (the answer went another way). */
  abandon(): Promise<void>
}

/**
 * Bytes `start` to `end` (inclusive) of `reader`, their first chunk read already: a store that fails at once
 * rejects here, before any header is sent, so the caller still answers with an error (and the reader is closed).
 */
export async function prepareDownload(reader: PositionalReader, start: number, end: number): Promise<PreparedDownload> {
  const first = take()
  let firstRead: number
  try {
    firstRead = end >= start ? await reader.read(first, Math.min(CHUNK, end - start + 1), start) : 0
  } catch (error) {
    give(first)
    await reader.close().catch(() => {})
    throw error
  }
  let closed = false
  const close = async () => {
    if (closed) return
    closed = true
    await reader.close().catch(() => {})
  }
  return {
    abandon: async () => {
      give(first)
      await close()
    },
    send: async (res) => {
      try {
        await pump(res, reader, first, firstRead, start, end)
      } finally {
        await close()
      }
    },
  }
}

async function pump(res: ServerResponse, reader: PositionalReader, first: Buffer, firstRead: number, start: number, end: number): Promise<void> {
  let out = 0
  let gone = false
  let wake: (() => void) | undefined
  const settle = () => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  const onClose = () => {
    gone = true
    settle()
  }
  res.once('close', onClose)
  // Waits until fewer than `limit` buffers are out, or the client has gone.
  const below = async (limit: number) => {
    while (out >= limit && !gone) await new Promise<void>((resolve) => { wake = resolve })
  }
  const write = (buffer: Buffer, length: number) => {
    out += 1
    res.write(length === buffer.length ? buffer : buffer.subarray(0, length), (error) => {
      out -= 1
      // The socket is done with these bytes (sent on, or never to be sent): the buffer may take others.
      give(buffer)
      if (error) gone = true
      settle()
    })
  }
  try {
    let position = start
    let buffer: Buffer | undefined = first
    let read = firstRead
    while (position <= end && !gone) {
      if (buffer === undefined) {
        await below(PER_DOWNLOAD)
        if (gone) break
        buffer = take()
        try {
          read = await reader.read(buffer, Math.min(CHUNK, end - position + 1), position)
        } catch (error) {
          give(buffer)
          res.destroy(error as Error)
          return
        }
      }
      if (read <= 0) {
        give(buffer)
        res.destroy(new Error('the stored file is shorter than its row says'))
        return
      }
      position += read
      write(buffer, read)
      buffer = undefined
    }
    // The first chunk of an empty range, or one read when the client had already gone.
    if (buffer !== undefined) give(buffer)
    if (!gone) res.end()
  } finally {
    res.off('close', onClose)
  }
}
