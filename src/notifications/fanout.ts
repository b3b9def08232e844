// Writes a pack's followers' notifications from the fan-outs that changes leave (./service.ts,
// notifyFollowers). Every instance runs one worker: it claims a fan-out with a lease (on PostgreSQL FOR
// UPDATE SKIP LOCKED), tells its followers BATCH at a time, each batch one transaction that also moves the
// fan-out's cursor and renews the lease, and gives the event loop a turn between batches, so that requests
// (the update-check above all) are answered meanwhile. A process killed midway leaves its lease to run out;
// the next claim resumes after the last committed batch, and a notice's id (the fan-out's and the
// follower's) keeps any follower from being told twice.
import { randomUUID } from 'node:crypto'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { claimFanout, deleteFanout, tellNextFollowers } from './repository.js'
import { fanoutWritten } from './service.js'

/**
 * Followers told per transaction. On SQLite a batch is synchronous work on the event loop: measured at
 * 1,000,000 users (docs/benchmarks.md, "Notifications"), a follower costs about a quarter of a millisecond
 * (its notice and its oldest one dropped, in two indexes), so 25 keep each batch to a few milliseconds and an
 * update-check waits no longer than that behind one.
 */
export const BATCH = 25
/** A claim lasts this long after its last batch. */
const LEASE_MS = 30_000
/** How often fan-outs are looked for when this process wrote none. */
const POLL_MS = 1000
/** How long after a local write the worker looks (the writing transaction commits meanwhile). */
const WAKE_DELAY_MS = 25

export interface FanoutDeps {
  db: Db
  log: FastifyBaseLogger
  clock: () => number
}

export class FanoutWorker {
  private readonly claimer = `${process.pid}-${randomUUID()}`
  private stopped = false
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private readonly wake = () => this.soon(WAKE_DELAY_MS)

  constructor(private readonly deps: FanoutDeps) {}

  start(): void {
    fanoutWritten.on('written', this.wake)
    this.soon(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    fanoutWritten.off('written', this.wake)
    if (this.timer) clearTimeout(this.timer)
    await this.running
  }

  private soon(ms: number): void {
    if (this.stopped || this.running) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.running = this.work().finally(() => {
        this.running = undefined
        this.soon(POLL_MS)
      })
    }, ms)
    // A worker never keeps a process alive.
    this.timer.unref()
  }

  /** Works through every fan-out there is, one after another; resolves when none is left (or on stop). */
  async work(): Promise<void> {
    const { db, clock } = this.deps
    try {
      while (!this.stopped) {
        const fanout = await claimFanout(db, this.claimer, nowIso(clock()), nowIso(clock() + LEASE_MS))
        if (!fanout) return
        let told: number
        do {
          told = await db.transaction().execute((trx) => tellNextFollowers(trx, fanout, this.claimer, BATCH, nowIso(clock() + LEASE_MS)))
          // The requests that arrived meanwhile go first.
          await nextTurn()
        } while (told > 0 && !this.stopped)
        if (!this.stopped) await deleteFanout(db, fanout.id, this.claimer)
      }
    } catch (error) {
      if (!this.stopped) this.deps.log.warn({ err: error }, 'notifications: telling followers failed; the rest is told when the claim runs out')
    }
  }
}
