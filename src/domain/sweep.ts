// The periodic sweep of expired pending uploads, abandoned drafts and expired sessions.
import type { Db } from '../db/index.js'
import { deleteExpiredSessions } from '../db/credentials.js'
import { nowIso } from '../db/time.js'
import type { FileStore } from '../storage/index.js'
import { sweepExpired } from './pending.js'

export interface SweeperDeps {
  db: Db
  store: FileStore
  draftTtlMs: number
  intervalMs: number
  log: { info(obj: object, msg: string): void; error(obj: object, msg: string): void }
}

export function startSweeper({ db, store, draftTtlMs, intervalMs, log }: SweeperDeps): { stop(): Promise<void> } {
  let running: Promise<void> | undefined
  const tick = () => {
    if (running) return
    running = (async () => {
      try {
        const swept = await sweepExpired(db, store, draftTtlMs)
        const sessions = await deleteExpiredSessions(db, nowIso())
        if (swept.uploads || swept.drafts || sessions) log.info({ ...swept, sessions }, 'swept expired uploads, drafts and sessions')
      } catch (error) {
        log.error({ err: error }, 'sweep failed')
      } finally {
        running = undefined
      }
    })()
  }
  // A first pass soon after start catches what expired while the site was down.
  const first = setTimeout(tick, Math.min(5_000, intervalMs))
  const timer = setInterval(tick, intervalMs)
  first.unref()
  timer.unref()
  return {
    /** Stops the timers and waits for a pass in progress, so the database is not closed under it. */
    async stop() {
      clearTimeout(first)
      clearInterval(timer)
      await running
    },
  }
}
