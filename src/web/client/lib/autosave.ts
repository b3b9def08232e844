// Debounced autosave of a form that never loses a keystroke:
// - saves about a second after the last change, one save at a time, always
//   the latest state (edits made while a save is in flight are sent next);
// - every change gets a revision (a time-based counter) that is saved with
//   the data, and is kept in localStorage until the server has acknowledged
//   it. When the page goes away mid-save (reload, closed tab), the next load
//   finds the newer local copy and saves it, whichever request reached the
//   server last;
// - on pagehide / a hidden tab the latest state goes out at once with
//   fetch keepalive, which outlives the page;
// - network errors and 5xx are retried with backoff; a 4xx is shown with the
//   server's reason and waits for the next change.
import { ApiError } from './api.js'

export type SaveState =
  | { kind: 'pending' }
  | { kind: 'saving' }
  | { kind: 'saved'; at: Date }
  | { kind: 'retrying'; detail: string }
  | { kind: 'failed'; detail: string }

export interface Snapshot {
  /** The form's data, saved as the draft (the revision is added to it). */
  data: Record<string, unknown>
  /** Anything else the page needs to restore the form from a local copy (tag colors). */
  extra?: unknown
}

export interface AutosaveOptions {
  /** localStorage key of the not-yet-acknowledged local copy. */
  storageKey: string
  /** The revision saved on the server (0 when none). */
  savedRevision: number
  collect(): Snapshot
  /** POST the draft; resolves with the server's updated_at. */
  send(data: Record<string, unknown>, keepalive: boolean): Promise<{ updated_at: string }>
  onState(state: SaveState): void
  debounceMs?: number
}

interface LocalCopy extends Snapshot {
  revision: number
}

const INITIAL_RETRY_MS = 1000
const MAX_RETRY_MS = 30_000
/** fetch keepalive bodies share a 64 KiB budget; a larger draft goes out as a plain request (the local copy covers it). */
const KEEPALIVE_LIMIT = 60_000

export class Autosave {
  private revision: number
  private savedRevision: number
  /** updated_at (ms) of the save the server processed last, as far as this page has heard. */
  private savedAtMs = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private running = false
  private stopped = false
  private retryMs = INITIAL_RETRY_MS
  private wakeUp: (() => void) | undefined
  private waiters: ((saved: boolean) => void)[] = []
  private readonly debounceMs: number

  constructor(private readonly options: AutosaveOptions) {
    this.revision = options.savedRevision
    this.savedRevision = options.savedRevision
    this.debounceMs = options.debounceMs ?? 1000
    window.addEventListener('pagehide', () => this.sendNow())
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') this.sendNow()
    })
    window.addEventListener('online', () => this.wakeUp?.())
  }

  get dirty(): boolean {
    return this.revision !== this.savedRevision
  }

  /**
   * A local copy newer than what the server holds: what a page that went away
   * before its last save was acknowledged left behind. Older copies are dropped.
   */
  takeNewerLocalCopy(): Snapshot | undefined {
    const copy = this.readCopy()
    if (copy && copy.revision > this.savedRevision) {
      this.revision = copy.revision
      return copy
    }
    this.clearCopy()
    return undefined
  }

  /** The form changed: keep a local copy now, save soon. */
  changed(): void {
    if (this.stopped) return
    this.revision = Math.max(Date.now(), this.revision + 1)
    this.writeCopy()
    this.options.onState({ kind: 'pending' })
    this.schedule()
  }

  /** Saves now (after a restored local copy, say) without waiting for the debounce. */
  schedule(delayMs = this.debounceMs): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.flush(), delayMs)
  }

  /** Saves whatever is unsaved; true once everything is saved, false as soon as a save fails. */
  flush(): Promise<boolean> {
    clearTimeout(this.timer)
    if (!this.dirty && !this.running) return Promise.resolve(true)
    const result = new Promise<boolean>((resolve) => this.waiters.push(resolve))
    if (this.running) this.wakeUp?.()
    else void this.run()
    return result
  }

  /** After publishing: the draft is gone, nothing more may recreate it. */
  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.clearCopy()
  }

  private async run(): Promise<void> {
    this.running = true
    try {
      while (this.dirty && !this.stopped) {
        const revision = this.revision
        const { data } = this.options.collect()
        this.options.onState({ kind: 'saving' })
        try {
          const saved = await this.options.send({ ...data, revision }, false)
          this.acknowledge(revision, saved.updated_at)
          this.retryMs = INITIAL_RETRY_MS
        } catch (error) {
          const detail = error instanceof ApiError ? error.detail : String(error)
          const status = error instanceof ApiError ? error.status : 0
          this.settle(false)
          if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
            // The server refused this state (too large, signed out, ...): say why; the next change tries again.
            this.options.onState({ kind: 'failed', detail })
            return
          }
          this.options.onState({ kind: 'retrying', detail })
          await this.sleep(this.retryMs)
          this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS)
        }
      }
      if (!this.dirty) this.settle(true)
    } finally {
      this.running = false
    }
  }

  /**
   * The server stored `revision` at `updatedAt`. Two saves can be in flight
   * (the loop's and the one sent when the tab was hidden); the one the server
   * processed last is what it holds, even when that is the older revision, and
   * then the latest state is dirty again and gets sent once more.
   */
  private acknowledge(revision: number, updatedAt: string): void {
    const atMs = Date.parse(updatedAt)
    if (Number.isNaN(atMs) || atMs > this.savedAtMs || (atMs === this.savedAtMs && revision < this.savedRevision)) {
      this.savedAtMs = Number.isNaN(atMs) ? this.savedAtMs : atMs
      this.savedRevision = revision
    }
    if (this.dirty) {
      this.writeCopy()
      if (!this.running) this.schedule(0)
      return
    }
    this.clearCopy()
    this.options.onState({ kind: 'saved', at: new Date() })
  }

  private settle(saved: boolean): void {
    const waiters = this.waiters
    this.waiters = []
    for (const resolve of waiters) resolve(saved)
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wakeUp = () => {
        this.wakeUp = undefined
        done()
      }
    })
  }

  /** The page is being hidden or unloaded: send the latest state now, in a request that outlives the page. */
  private sendNow(): void {
    if (!this.dirty || this.stopped) return
    clearTimeout(this.timer)
    this.writeCopy()
    const revision = this.revision
    const data = { ...this.options.collect().data, revision }
    const keepalive = JSON.stringify(data).length < KEEPALIVE_LIMIT
    this.options.send(data, keepalive).then(
      (saved) => this.acknowledge(revision, saved.updated_at),
      // Still here (the tab was only hidden): the ordinary loop retries.
      () => this.schedule(0),
    )
  }

  private readCopy(): LocalCopy | undefined {
    try {
      const text = localStorage.getItem(this.options.storageKey)
      if (!text) return undefined
      const copy = JSON.parse(text) as Partial<LocalCopy>
      if (typeof copy.revision !== 'number' || typeof copy.data !== 'object' || copy.data === null) return undefined
      return copy as LocalCopy
    } catch {
      return undefined
    }
  }

  private writeCopy(): void {
    try {
      const snapshot = this.options.collect()
      localStorage.setItem(this.options.storageKey, JSON.stringify({ ...snapshot, revision: this.revision }))
    } catch {
      // Storage full or disabled: the server copy is all there is.
    }
  }

  private clearCopy(): void {
    try {
      localStorage.removeItem(this.options.storageKey)
    } catch {
      // As above.
    }
  }
}

/** localStorage key of a draft's local copy (the drafts page removes it with the draft). */
export function draftCopyKey(draftId: string): string {
  return `packs:draft:${draftId}`
}
