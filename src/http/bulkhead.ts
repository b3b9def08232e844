// A bulkhead for the heavy reads (issue 12, item 4): the browse and pack
// pages, the listing, autocomplete, profiles and statistics. Node runs every
// request on one thread, and SQLite answers synchronously on it, so twenty
// people paging through a 100,000-pack site interleave their queries and
// rendering with every player's update-check: measured, the update-check's
// p50 went from 2 ms to 110 ms. Routes marked `config: { heavy: true }` take
// one of a few slots before their handler runs; the others wait in line, in
// order, outside the event loop's work, so at most that many heavy requests
// are ever in progress and a light request waits behind at most their next
// step. The line is bounded: past it a heavy request is a 503 with
// Retry-After, and the light paths never wait at all.
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { ServiceUnavailable } from '../errors.js'
import type { App } from './types.js'

/** Heavy requests in progress at once: SQLite's work is on this thread (few), PostgreSQL's is not (more). */
export const HEAVY_SLOTS = { sqlite: 2, postgres: 8 } as const
/** Heavy requests waiting for a slot; one more is refused (503) rather than queued without end. */
export const HEAVY_QUEUE = 512

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
      return Promise.resolve(this.releaser())
    }
    if (this.waiting.length >= this.queueLimit) return Promise.resolve(null)
    return new Promise((resolve) => {
      const grant = () => resolve(this.releaser())
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
    // Null: the line is full, or the client left while waiting (the answer then goes nowhere).
    if (release === null) throw new ServiceUnavailable('the site is busy answering other pages; try again in a moment')
    // 'close' comes after the answer is sent, and also when the client goes away first; if it already
    // came (gone before a free slot was taken), the slot is given back now.
    if (gone || raw.destroyed || raw.socket?.destroyed !== false) release()
    else raw.once('close', release)
  })
}, { name: 'bulkhead', dependencies: ['auth'], decorators: { fastify: ['config'] } })
