// Where the server's log lines go (pino's destination and the access log's):
// standard output, written in batches. Lines are gathered in memory and
// written off the event loop once BATCH_BYTES have gathered or FLUSH_MS have
// passed, whatever comes first, one write at a time. Each write holds whole
// lines and at most PIPE_BUF (4096) bytes, which a pipe or an O_APPEND file
// takes in one piece: with several workers (WEB_CONCURRENCY) on one stdout,
// their lines never cut into each other. What is left is written
// synchronously when the process exits.
//
// Not pino's own destination (SonicBoom): it appends each line to one growing
// string and measures it, so a batch costs time quadratic in its size; with
// a line per request that was more than the rest of the update-check's work.
import fs from 'node:fs'

export interface LogSinkOptions {
  /** The file descriptor written to (1: standard output). */
  fd?: number
  /** A batch is written once it holds this many bytes (about: lengths are counted in UTF-16 code units). */
  batchBytes?: number
  /** ...or once its first line has waited this long. */
  flushMs?: number
  /** Backlog beyond which new lines are dropped (and counted) rather than held: a stuck reader must not grow the heap. */
  maxBacklogBytes?: number
}

/** The most a pipe takes atomically (POSIX PIPE_BUF on Linux). */
const ATOMIC_WRITE = 4096

export class LogSink {
  private readonly fd: number
  private readonly batchBytes: number
  private readonly flushMs: number
  private readonly maxBacklogBytes: number
  private lines: string[] = []
  private pending = 0
  /** Batches joined and waiting for the write in flight. */
  private readonly queue: string[] = []
  private queued = 0
  private writing = false
  /** The batch being written and where its piece in flight starts: what an exit still owes. */
  private current: { batch: string; from: number } | undefined
  private timer: NodeJS.Timeout | undefined
  /** Lines dropped because the backlog was full; reported in the next batch. */
  dropped = 0

  constructor(options: LogSinkOptions = {}) {
    this.fd = options.fd ?? 1
    this.batchBytes = options.batchBytes ?? 64 * 1024
    this.flushMs = options.flushMs ?? 250
    this.maxBacklogBytes = options.maxBacklogBytes ?? 16 * 1024 * 1024
    process.once('exit', () => this.flushSync())
  }

  /** One or more whole lines, each ending in "\n" (what pino and the access log hand over). */
  write(line: string): boolean {
    if (this.pending + this.queued > this.maxBacklogBytes) {
      this.dropped++
      return false
    }
    this.lines.push(line)
    this.pending += line.length
    if (this.pending >= this.batchBytes) this.cut()
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => this.cut(), this.flushMs)
      this.timer.unref()
    }
    return true
  }

  /** Nothing gathered, queued or being written (tests). */
  get idle(): boolean {
    return !this.writing && this.lines.length === 0 && this.queue.length === 0
  }

  /** Writes whatever is gathered now (tests; shutdown). */
  flush(): void {
    this.cut()
  }

  private cut(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    if (this.lines.length === 0) return
    if (this.dropped > 0) {
      this.lines.push(`{"level":40,"time":${Date.now()},"msg":"log lines dropped: the output was not being read fast enough","dropped":${this.dropped}}\n`)
      this.dropped = 0
    }
    const batch = this.lines.join('')
    this.lines = []
    this.pending = 0
    this.queue.push(batch)
    this.queued += batch.length
    this.next()
  }

  private next(): void {
    if (this.writing || this.queue.length === 0) return
    this.writing = true
    const batch = this.queue.join('')
    this.queue.length = 0
    this.queued = 0
    this.sendPieces(batch, 0)
  }

  /** Writes `batch` from character `from` on, one piece of whole lines (at most ATOMIC_WRITE bytes) at a time. */
  private sendPieces(batch: string, from: number): void {
    if (from >= batch.length) {
      this.current = undefined
      this.writing = false
      return this.next()
    }
    this.current = { batch, from }
    let end = from
    let bytes = 0
    while (end < batch.length) {
      const lineEnd = batch.indexOf('\n', end)
      const next = lineEnd === -1 ? batch.length : lineEnd + 1
      const lineBytes = Buffer.byteLength(batch.slice(end, next))
      // A line longer than a piece goes alone; it cannot be atomic anyway.
      if (bytes > 0 && bytes + lineBytes > ATOMIC_WRITE) break
      bytes += lineBytes
      end = next
    }
    this.send(Buffer.from(batch.slice(from, end), 'utf8'), 0, () => this.sendPieces(batch, end))
  }

  private send(buffer: Buffer, offset: number, done: () => void): void {
    fs.write(this.fd, buffer, offset, buffer.length - offset, null, (error, written) => {
      if (error) {
        // Standard output as a non-blocking pipe that is full: try again shortly. Anything else: the piece is lost.
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return void setTimeout(() => this.send(buffer, offset, done), 10).unref()
        return done()
      }
      if (offset + written < buffer.length) return this.send(buffer, offset + written, done)
      done()
    })
  }

  /** Everything not yet written, synchronously: the process is exiting. */
  flushSync(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    // The piece in flight may or may not be written before the process ends: written again from its start
    // (a line twice rather than a line lost), then everything after it.
    const rest = (this.current ? this.current.batch.slice(this.current.from) : '') + this.queue.join('') + this.lines.join('')
    this.current = undefined
    this.queue.length = 0
    this.lines = []
    this.pending = 0
    this.queued = 0
    if (rest === '') return
    const buffer = Buffer.from(rest, 'utf8')
    let offset = 0
    while (offset < buffer.length) {
      try {
        offset += fs.writeSync(this.fd, buffer, offset)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return
      }
    }
  }
}
