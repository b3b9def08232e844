// A cap on password hashing. scrypt runs on libuv's thread pool (4 threads
// unless UV_THREADPOOL_SIZE says otherwise), which file reads, file writes and
// DNS share; a flood of sign-in attempts with wrong passwords, each costing
// ~0.1 s of CPU and 32 MiB, would otherwise queue ahead of every file served.
// So only a few hashes run at once, a short queue waits behind them, and
// beyond that a request is refused at once with 429 and Retry-After, before
// any scrypt runs. Every scrypt of the process goes through this (passwords.ts).
import { availableParallelism } from 'node:os'
import { TooManyRequests } from '../errors.js'

/** Refused because other password checks fill the queue; nothing was counted against the client. */
export class PasswordWorkBusy extends TooManyRequests {
  constructor() {
    super('the server is busy checking other passwords; retry in 1 s', 1)
  }
}

export class PasswordWork {
  private active = 0
  private readonly waiting: Array<() => void> = []
  /** The most hashes that ever ran at once, and how many were refused (for tests and the stats). */
  peak = 0
  refused = 0
  started = 0

  constructor(
    readonly concurrency: number,
    readonly queueLimit: number,
  ) {}

  /** Runs `task` when a slot is free; throws PasswordWorkBusy at once when the queue is full too. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.concurrency) {
      this.active += 1
    } else {
      if (this.waiting.length >= this.queueLimit) {
        this.refused += 1
        throw new PasswordWorkBusy()
      }
      // The slot is handed over by release(), so `active` already counts this task.
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
    this.started += 1
    if (this.active > this.peak) this.peak = this.active
    try {
      return await task()
    } finally {
      this.release()
    }
  }

  private release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.active -= 1
  }
}

/**
 * Half the thread pool, so file I/O always finds threads, and no more hashes
 * than there are cores beyond the one the event loop needs.
 */
function defaultConcurrency(): number {
  const pool = Number(process.env.UV_THREADPOOL_SIZE) || 4
  return Math.max(1, Math.min(Math.floor(pool / 2), availableParallelism() - 1))
}

/** 8 waiting per slot at ~0.1 s each keeps the longest wait under a second: a person signing in during a flood still gets in. */
const CONCURRENCY = defaultConcurrency()
export const passwordWork = new PasswordWork(CONCURRENCY, 8 * CONCURRENCY)
