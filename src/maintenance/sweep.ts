// The periodic sweep of expired pending uploads, abandoned drafts, expired
// sessions, past days' download marks and lapsed team invitations and ownership offers, followed by the consistency check (src/maintenance/doctor.ts) in its
// storage-only repair mode: what a crash left in the store goes once it is
// older than the grace period. The same pass runs once at start-up, in the
// background, as soon as the server listens.
import type { Db } from '../db/index.js'
import { deleteExpiredSessions } from '../auth/credentials-repository.js'
import { nowIso } from '../db/time.js'
import type { FileStore } from '../storage/index.js'
import { formatFinding, formatSummary, runDoctor, type Finding } from './doctor.js'
import { listExpiredUploads } from '../uploads/repository.js'
import { purgeUploads } from '../uploads/service.js'
import { listAbandonedDraftIds } from '../drafts/repository.js'
import { purgeDrafts } from '../drafts/service.js'
import { deleteSeenBefore } from '../downloads/repository.js'
import { indexMissingPacks, moveTrendingWindow } from '../packs/search-service.js'
import { CHANGE_LOG_KEEP_MS, pruneChanges } from '../packs/search-changes-repository.js'
import { utcDay } from '../downloads/counter.js'
import { deleteLapsed } from '../packs/team-repository.js'

export interface SweeperDeps {
  db: Db
  store: FileStore
  draftTtlMs: number
  intervalMs: number
  /** Bytes without a row and unfinished writes younger than this are left alone. */
  orphanGraceMs: number
  /** How long one pass may spend walking the store; the next pass continues where it stopped. */
  checkBudgetMs?: number
  /** The time expiries and the grace are measured on (Date.now; tests pass their own clock). */
  now?: () => number
  log: {
    info(obj: object, msg: string): void
    warn(obj: object, msg: string): void
    error(obj: object, msg: string): void
  }
}

export interface Sweeper {
  /** Runs a pass now (unless one is running), e.g. at start-up; resolves when it is done. */
  runNow(trigger: 'start-up' | 'sweep'): Promise<void>
  /**
   * Stops the timers and a pass in progress at its next step, and waits for it to have stopped, so the
   * database is not closed under it and a shutdown does not wait for the rest of a long pass.
   */
  stop(): Promise<void>
}

/** A pass on a huge store must not hold the sweep for long; what is left is walked by the next passes. */
const CHECK_BUDGET_MS = 60_000
/** The share of the event loop a background pass may take (see Pacer in ./doctor.ts). */
const BACKGROUND_DUTY_CYCLE = 0.25
/** Finding lines logged per pass; the summary counts them all. */
const MAX_LOGGED_FINDINGS = 50

export function startSweeper({ db, store, draftTtlMs, intervalMs, orphanGraceMs, checkBudgetMs = CHECK_BUDGET_MS, now = Date.now, log }: SweeperDeps): Sweeper {
  let running: Promise<void> | undefined
  let stopped = false
  // Aborted by stop(): the consistency check and the sweep's steps end early instead of running to the end.
  const stopping = new AbortController()
  // Where the storage walk continues when a pass ran out of time.
  let resumeAfter: string | undefined

  const check = async (trigger: 'start-up' | 'sweep') => {
    let logged = 0
    const onFinding = (finding: Finding) => {
      if (logged++ >= MAX_LOGGED_FINDINGS) return
      const fields = { kind: finding.kind, subject: finding.subject, trigger }
      if (finding.repaired) log.info(fields, `consistency check: ${formatFinding(finding)}`)
      else log.warn(fields, `consistency check: ${formatFinding(finding)}`)
    }
    const report = await runDoctor(db, store, {
      repair: 'storage',
      graceMs: orphanGraceMs,
      now: now(),
      // The budget is real time spent working, whatever the clock says.
      deadline: Date.now() + checkBudgetMs,
      ...(resumeAfter ? { after: resumeAfter } : {}),
      onFinding,
      // A live site's requests come first: the check takes at most a quarter of the event loop.
      dutyCycle: BACKGROUND_DUTY_CYCLE,
      signal: stopping.signal,
    })
    resumeAfter = report.complete ? undefined : report.resumeAfter
    const summary = formatSummary(report, orphanGraceMs)
    const fields = { trigger, found: report.found, repaired: report.repaired, remaining: report.remaining, complete: report.complete }
    if (report.remaining > 0) log.warn(fields, `consistency check: ${summary}`)
    else if (trigger === 'start-up' || report.found > 0) log.info(fields, `consistency check: ${summary}`)
  }

  const pass = (trigger: 'start-up' | 'sweep'): Promise<void> => {
    if (running || stopped) return running ?? Promise.resolve()
    const { signal } = stopping
    running = (async () => {
      try {
        // Each step is short; between them a stop ends the pass (the next pass does what is left).
        const swept = await sweepExpired(db, store, draftTtlMs, now())
        signal.throwIfAborted()
        const sessions = await deleteExpiredSessions(db, nowIso(now()))
        // Download marks only matter on their own UTC day; yesterday's stay for a batch written just after midnight.
        const downloadMarks = await deleteSeenBefore(db, utcDay(now() - 24 * 60 * 60 * 1000))
        // Lapsed team invitations and ownership offers grant nothing already; removing them keeps the tables small.
        const invitations = await deleteLapsed(db, nowIso(now()))
        signal.throwIfAborted()
        // Search: trending counts the last 7 days; packs moved in by import or restore get their index entries.
        await moveTrendingWindow(db, utcDay(now()))
        signal.throwIfAborted()
        const indexed = await indexMissingPacks(db)
        if (indexed > 0) log.info({ packs: indexed }, 'indexed packs for search that had no entry (moved in by import or restore)')
        // Search's change log: an instance that has not read it for this long reloads its copy of the index anyway.
        await pruneChanges(db, nowIso(now() - CHANGE_LOG_KEEP_MS))
        if (swept.uploads || swept.drafts || sessions || downloadMarks || invitations) {
          log.info({ ...swept, sessions, download_marks: downloadMarks, invitations },
            'swept expired uploads, drafts, sessions, old download marks and lapsed team invitations and offers')
        }
      } catch (error) {
        if (!signal.aborted) log.error({ err: error }, 'sweep failed')
      }
      try {
        if (!signal.aborted) await check(trigger)
      } catch (error) {
        if (!signal.aborted) log.error({ err: error, trigger }, 'consistency check failed')
      } finally {
        if (signal.aborted) log.info({ trigger }, 'sweep and consistency check stopped: the server is closing (the next start runs them again)')
        running = undefined
      }
    })()
    return running
  }

  // A first pass soon after start catches what expired while the site was down
  // (the server also asks for one as soon as it listens: runNow).
  const first = setTimeout(() => void pass('sweep'), Math.min(5_000, intervalMs))
  const timer = setInterval(() => void pass('sweep'), intervalMs)
  first.unref()
  timer.unref()
  return {
    async runNow(trigger) {
      clearTimeout(first)
      // A pass already under way may have started before what this one is for: run after it.
      while (running) await running
      return pass(trigger)
    },
    async stop() {
      stopped = true
      clearTimeout(first)
      clearInterval(timer)
      stopping.abort(new Error('the sweeper was stopped'))
      await running
    },
  }
}

export interface SweepResult {
  uploads: number
  drafts: number
}

const SWEEP_BATCH = 500

/** One pass: expired pending uploads, then drafts untouched for longer than `draftTtlMs`. */
export async function sweepExpired(db: Db, store: FileStore, draftTtlMs: number, now = Date.now()): Promise<SweepResult> {
  const result: SweepResult = { uploads: 0, drafts: 0 }
  for (;;) {
    const expired = await listExpiredUploads(db, nowIso(now), SWEEP_BATCH)
    await purgeUploads(db, store, expired)
    result.uploads += expired.length
    if (expired.length < SWEEP_BATCH) break
  }
  for (;;) {
    const abandoned = await listAbandonedDraftIds(db, nowIso(now - draftTtlMs), SWEEP_BATCH)
    await purgeDrafts(db, store, abandoned)
    result.drafts += abandoned.length
    if (abandoned.length < SWEEP_BATCH) break
  }
  return result
}
