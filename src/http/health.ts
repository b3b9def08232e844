// Liveness and readiness. /healthz says the process answers (a restart is
// what helps when it does not); /readyz says whether the backends it needs
// answer too (the database, the store, Redis when REDIS_URL is set), so a load
// balancer sends no request to an instance that could only answer 503.
//
// Both are outside the gate (docs/decisions.md#the-gate) so load balancers
// and probes need no password. So anyone may poll /readyz: its checks run at
// most once per second whatever the rate (later callers get that second's
// results), each is bounded in time, and a check still running from an earlier
// round (a database that stopped answering) is waited on again rather than
// started twice. The answer names what failed and how, never an address or a
// message from the backend, which could carry a host name or a user name.
import { sql } from 'kysely'
import { Type } from 'typebox'
import type { Db } from '../db/index.js'
import type { FileStore } from '../storage/index.js'
import type { App } from './types.js'

/** How long one check may take before it counts as failed. */
export const PROBE_TIMEOUT_MS = 1500
/** How long a round's results are reused. */
export const PROBE_CACHE_MS = 1000

/** One backend's check: resolves when it answered, rejects otherwise. */
export interface Probe {
  /** What the answer calls it: database, storage, redis. */
  name: string
  check(): Promise<void>
}

export interface ProbeResult {
  name: string
  ok: boolean
  /** How long it took, or how long it was given when it timed out. */
  ms: number
  /** Why it failed: it answered with an error, or not within the time. */
  failure?: 'error' | 'timeout'
}

interface ProbeState {
  probe: Probe
  /** The check under way, kept across rounds until it settles. */
  running: Promise<void> | undefined
  startedAt: number
}

/** Runs the probes, all at once, at most once per `cacheMs`; shared by GET /readyz and GET /metrics. */
export class Readiness {
  private readonly probes: ProbeState[]
  private last: { results: ProbeResult[]; at: number } | undefined
  private round: Promise<ProbeResult[]> | undefined

  constructor(
    probes: readonly Probe[],
    private readonly timeoutMs = PROBE_TIMEOUT_MS,
    private readonly cacheMs = PROBE_CACHE_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.probes = probes.map((probe) => ({ probe, running: undefined, startedAt: 0 }))
  }

  results(): Promise<ProbeResult[]> {
    if (this.last && this.clock() - this.last.at < this.cacheMs) return Promise.resolve(this.last.results)
    this.round ??= Promise.all(this.probes.map((state) => this.run(state))).then((results) => {
      this.last = { results, at: this.clock() }
      this.round = undefined
      return results
    })
    return this.round
  }

  private run(state: ProbeState): Promise<ProbeResult> {
    const { name } = state.probe
    if (state.running === undefined) {
      state.startedAt = this.clock()
      // A probe that throws synchronously fails like one that rejects.
      const running = Promise.resolve().then(() => state.probe.check())
      state.running = running
      void running.then(() => { state.running = undefined }, () => { state.running = undefined })
    }
    const { running, startedAt } = state
    return new Promise<ProbeResult>((resolve) => {
      const timer = setTimeout(() => resolve({ name, ok: false, ms: this.timeoutMs, failure: 'timeout' }), Math.max(0, this.timeoutMs - (this.clock() - startedAt)))
      void running.then(
        () => resolve({ name, ok: true, ms: this.clock() - startedAt }),
        () => resolve({ name, ok: false, ms: this.clock() - startedAt, failure: 'error' }),
      ).finally(() => clearTimeout(timer))
    })
  }
}

/**
 * One read of a Packs table. Not `select 1`: on SQLite that touches no file, so a database whose disk has
 * failed would still pass.
 */
export function databaseProbe(db: Db): Probe {
  return {
    name: 'database',
    check: async () => { await sql`select 1 from kysely_migration limit 1`.execute(db) },
  }
}

/** A key no file has, so nothing is ever read: the store answering "no such object" is the store answering. */
const PROBE_KEY = 'readiness-probe'

export function storageProbe(store: FileStore): Probe {
  return {
    name: 'storage',
    async check() {
      try {
        const stream = await store.get(PROBE_KEY)
        stream.destroy()
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    },
  }
}

/** What failed, in words: "database (no answer within 1.5 s), redis (error)". */
export function describeFailures(results: readonly ProbeResult[]): string {
  return results.filter((r) => !r.ok)
    .map((r) => `${r.name} (${r.failure === 'timeout' ? `no answer within ${r.ms / 1000} s` : 'answered with an error'})`)
    .join(', ')
}

export interface HealthOptions {
  /** The backends /readyz checks (src/app.ts); none means it always answers ready. */
  readiness?: Readiness
}

const CheckResult = Type.Object({ ok: Type.Boolean(), ms: Type.Number() })
const Checks = Type.Record(Type.String(), CheckResult)

export default async function healthRoutes(app: App, options: HealthOptions): Promise<void> {
  app.get('/healthz', {
    config: { access: 'public' },
    schema: { hide: true, response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }))

  const readiness = options.readiness ?? new Readiness([])
  app.get('/readyz', {
    config: { access: 'public' },
    schema: {
      hide: true,
      response: {
        200: Type.Object({ status: Type.Literal('ready'), checks: Checks }),
        503: Type.Object({ detail: Type.String(), checks: Checks }),
      },
    },
  }, async (_request, reply) => {
    const results = await readiness.results()
    const checks = Object.fromEntries(results.map((r) => [r.name, { ok: r.ok, ms: Math.round(r.ms * 10) / 10 }]))
    const failed = describeFailures(results)
    if (failed === '') return { status: 'ready' as const, checks }
    return reply.code(503).send({ detail: `not ready: ${failed}`, checks })
  })
}
