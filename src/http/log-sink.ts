// Where the server's log lines go (pino's destination and the access log's):
// standard output, written in batches off the event loop. Each line is
// copied, as UTF-8, into a chunk of memory the moment it is logged; a chunk
// is written once it is full or FLUSH_MS after its first line, whichever
// comes first, one write at a time, and the chunk is used again afterwards.
// What is left is written synchronously when the process exits.
//
// How much one write holds depends on what standard output is:
// - a regular file (`>> packs.log`): a whole chunk in one write. Appends of
//   whole lines by one write() never cut into each other, so several workers
//   (WEB_CONCURRENCY) may share the file.
// - anything else (a pipe to journald or a log shipper, a terminal): pieces of
//   whole lines, at most PIPE_BUF (4096) bytes each, which a pipe takes in one
//   piece, for the same reason.
//
// The writes are asynchronous (libuv's thread pool) even to a file: a disk
// busy with uploads can make one write wait, and that must not stop the loop.
//
// Not pino's own destination (SonicBoom): it appends each line to one growing
// string and measures it, so a batch costs time quadratic in its size. Nor
// an array of lines joined and cut again per write (this sink's first form):
// the update-check answers tens of thousands of requests a second, one access
// line each, and every string and Buffer per line showed in its throughput.
import fs from 'node:fs'

export interface LogSinkOptions {
  /** The file descriptor written to (1: standard output). */
  fd?: number
  /** A chunk's size: a batch is written once the next line might not fit. */
  batchBytes?: number
  /** ...or once its first line has waited this long. */
  flushMs?: number
  /** Backlog beyond which new lines are dropped (and counted) rather than held: a stuck reader must not grow the heap. */
  maxBacklogBytes?: number
  /** Write pieces of at most 4096 bytes; by default, unless `fd` is a regular file. */
  atomicPieces?: boolean
}

/** The most a pipe takes atomically (POSIX PIPE_BUF on Linux). */
const ATOMIC_WRITE = 4096
const NEWLINE = 0x0a
/** Chunks kept for reuse once written; more are made when a reader is slow, and left to the GC afterwards. */
const SPARE_CHUNKS = 2

/** A chunk waiting to be written: bytes [written, length) of `buffer` are still owed. */
interface Sealed {
  buffer: Buffer
  length: number
  written: number
}

export class LogSink {
  private readonly fd: number
  private readonly chunkBytes: number
  private readonly flushMs: number
  private readonly maxBacklogBytes: number
  private readonly atomicPieces: boolean
  /** The chunk lines are copied into, and how much of it they fill. */
  private chunk: Buffer
  private used = 0
  /** Chunks full and waiting, oldest first; the first is being written while `writing`. */
  private readonly sealed: Sealed[] = []
  private queued = 0
  private writing = false
  private readonly spare: Buffer[] = []
  private timer: NodeJS.Timeout | undefined
  /** Lines dropped because the backlog was full; reported in the next batch. */
  dropped = 0

  constructor(options: LogSinkOptions = {}) {
    this.fd = options.fd ?? 1
    this.chunkBytes = options.batchBytes ?? 64 * 1024
    this.flushMs = options.flushMs ?? 250
    this.maxBacklogBytes = options.maxBacklogBytes ?? 16 * 1024 * 1024
    this.atomicPieces = options.atomicPieces ?? !isRegularFile(this.fd)
    this.chunk = Buffer.allocUnsafe(this.chunkBytes)
    process.once('exit', () => this.flushSync())
  }

  /** One or more whole lines, each ending in "\n" (what pino and the access log hand over). */
  write(line: string): boolean {
    // At most 3 bytes of UTF-8 per UTF-16 code unit: whether the line fits is known without measuring it.
    const most = line.length * 3
    if (this.queued + this.used + most > this.maxBacklogBytes) {
      this.dropped++
      return false
    }
    this.append(line, most)
    if (this.timer === undefined) {
      this.timer = setTimeout(() => this.cut(), this.flushMs)
      this.timer.unref()
    }
    return true
  }

  /** Nothing gathered, queued or being written (tests). */
  get idle(): boolean {
    return !this.writing && this.used === 0 && this.sealed.length === 0
  }

  /** Writes whatever is gathered now (tests; shutdown). */
  flush(): void {
    this.cut()
  }

  private append(line: string, most: number): void {
    if (this.used + most > this.chunk.length) {
      this.seal()
      // A line longer than a chunk (a long stack trace) is a chunk of its own.
      if (most > this.chunk.length) return this.enqueue(Buffer.from(line, 'utf8'))
    }
    this.used += this.chunk.write(line, this.used, 'utf8')
  }

  private cut(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    if (this.dropped > 0) {
      const line = `{"level":40,"time":${Date.now()},"msg":"log lines dropped: the output was not being read fast enough","dropped":${this.dropped}}\n`
      this.dropped = 0
      this.append(line, line.length * 3)
    }
    this.seal()
  }

  /** Queues the chunk's lines for writing and starts a fresh chunk. */
  private seal(): void {
    if (this.used === 0) return
    const full = this.chunk
    const length = this.used
    this.chunk = this.spare.pop() ?? Buffer.allocUnsafe(this.chunkBytes)
    this.used = 0
    this.enqueue(full, length)
  }

  private enqueue(buffer: Buffer, length = buffer.length): void {
    this.sealed.push({ buffer, length, written: 0 })
    this.queued += length
    this.next()
  }

  private next(): void {
    if (this.writing) return
    const head = this.sealed[0]
    if (head === undefined) return
    if (head.written >= head.length) {
      this.sealed.shift()
      this.queued -= head.length
      if (head.buffer.length === this.chunkBytes && this.spare.length < SPARE_CHUNKS) this.spare.push(head.buffer)
      return this.next()
    }
    this.writing = true
    const end = this.atomicPieces ? pieceEnd(head.buffer, head.written, head.length) : head.length
    fs.write(this.fd, head.buffer, head.written, end - head.written, null, (error, written) => {
      this.writing = false
      if (error) {
        // Standard output as a non-blocking pipe that is full: try again shortly. Anything else: the piece is lost.
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.writing = true
          return void setTimeout(() => {
            this.writing = false
            this.next()
          }, 10).unref()
        }
        head.written = end
      } else {
        head.written += written
      }
      this.next()
    })
  }

  /** Everything not yet written, synchronously: the process is exiting. */
  flushSync(): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    // The write in flight may or may not land before the process ends: its bytes are written again (a line twice
    // rather than a line lost), then everything after it.
    const owed = this.sealed.map((piece) => piece.buffer.subarray(piece.written, piece.length))
    owed.push(this.chunk.subarray(0, this.used))
    this.sealed.length = 0
    this.queued = 0
    this.used = 0
    const rest = Buffer.concat(owed)
    let offset = 0
    while (offset < rest.length) {
      try {
        offset += fs.writeSync(this.fd, rest, offset)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return
      }
    }
  }
}

/** Where the piece starting at `from` ends: whole lines, at most ATOMIC_WRITE bytes, or one longer line alone. */
function pieceEnd(buffer: Buffer, from: number, length: number): number {
  if (length - from <= ATOMIC_WRITE) return length
  const lastNewline = buffer.lastIndexOf(NEWLINE, from + ATOMIC_WRITE - 1)
  if (lastNewline >= from) return lastNewline + 1
  const newline = buffer.indexOf(NEWLINE, from)
  return newline === -1 || newline >= length ? length : newline + 1
}

function isRegularFile(fd: number): boolean {
  try {
    return fs.fstatSync(fd).isFile()
  } catch {
    return false
  }
}
