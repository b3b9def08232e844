// A bulkhead for the heavy reads: the browse and pack
// pages, the listing, autocomplete, profiles and statistics. Node runs every
// request on one thread, and SQLite answers synchronously on it: a heavy
// request runs from its first query to its last byte in one go (its awaits
// resolve at once), and Node handles every request whose bytes arrived
// together before it looks at the next ones. Twenty people paging through a
// 100,000-pack site thus made each turn of the event loop 140 ms long, and
// every player's update-check waited that long (measured: p50 2 ms alone,
// 126 ms beside them).
//
// Routes marked `config: { heavy: true }` take one of a few slots before
// their handler runs, and a slot is handed over only on a later turn of the
// event loop (setImmediate), so a turn runs at most that many heavy requests
// and everything light in between. The others wait in line, in order. The
// line is bounded: past it a heavy request is a 503 with Retry-After. Light
// paths (the update-check, downloads, uploads) never wait here.
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { sendError } from './errors.js'
import type { App } from './types.js'

/** Heavy requests in progress at once: SQLite works on this thread (one; measured better than two: the update-check beside 20 searching connections p50 8.6 ms against 18.7), PostgreSQL does not (more). */
export const HEAVY_SLOTS = { sqlite: 1, postgres: 8 } as const
/** Heavy requests waiting for a slot; one more is refused (503) rather than queued without end. */
export const HEAVY_QUEUE = 512
/** Retry-After of that refusal: the line moves in milliseconds. */
const BUSY_RETRY_AFTER_SECONDS = 1

export class Bulkhead {
  private active = 0
  private readonly waiting: Array<() => void> = []

  constructor(readonly slots: number, readonly queueLimit: number) {}

  get inProgress(): number { return this.active }
  get queued(): number { return this.waiting.length }

  /**
   * Resolves with a release function once a slot is free; null when the line
   * is full. `abandoned` fires if the client leaves while waiting: its place
   * is given up.
   */
  acquire(onAbandon: (cancel: () => void) => void): Promise<(() => void) | null> {
    if (this.active < this.slots) {
      this.active += 1
      // Even a free slot is taken on the next turn: the requests that arrived with this one go first.
      return new Promise((resolve) => setImmediate(() => resolve(this.releaser())))
    }
    if (this.waiting.length >= this.queueLimit) return Promise.resolve(null)
    return new Promise((resolve) => {
      const grant = () => setImmediate(() => resolve(this.releaser()))
      this.waiting.push(grant)
      onAbandon(() => {
        const at = this.waiting.indexOf(grant)
        if (at !== -1) {
          this.waiting.splice(at, 1)
          resolve(null)
        }
      })
    })
  }

  private releaser(): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.waiting.shift()
      // The slot passes straight to the next in line (active stays the same).
      if (next) next()
      else this.active -= 1
    }
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Takes a slot of the bulkhead (./bulkhead.ts) before the handler runs. */
    heavy?: boolean
  }
  interface FastifyInstance {
    bulkhead: Bulkhead
  }
}

export default fp(async function bulkhead(app: App) {
  const engine = app.config.databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres'
  const line = new Bulkhead(HEAVY_SLOTS[engine], HEAVY_QUEUE)
  app.decorate('bulkhead', line)

  // After the gate and authentication (onRequest), so a request without access never holds a place.
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.routeOptions.config.heavy !== true) return
    const raw = reply.raw
    let gone = false
    const release = await line.acquire((cancel) => raw.once('close', () => {
      gone = true
      cancel()
    }))
    // Null: the line is full, or the client left while waiting (the answer then goes nowhere). Answered here,
    // not thrown: a flood of refusals is not a backend failure, and must not write an error line each.
    if (release === null) {
      reply.header('retry-after', String(BUSY_RETRY_AFTER_SECONDS))
      return sendError(reply, 503, 'the site is busy answering other pages; try again in a moment')
    }
    // 'close' comes after the answer is sent, and also when the client goes away first; if it already
    // came (gone before a free slot was taken), the slot is given back now.
    if (gone || raw.destroyed || raw.socket?.destroyed !== false) release()
    else raw.once('close', release)
  })
}, { name: 'bulkhead', dependencies: ['auth'], decorators: { fastify: ['config'] } })
