// The search thread: a server answers searches on a thread of its own (a
// worker_threads Worker running search-worker.ts), so that the in-memory copy
// of the index and the search's work (a pass over the matches, the facet
// counts, the typo candidates, several milliseconds each) never hold up the
// requests that wait behind them on the main thread: above all the
// update-check, which takes a fraction of a millisecond and is asked on every
// game start (docs/site.md#search, "the search thread").
//
// The thread opens its own handle on the same database (a second SQLite
// connection in WAL mode reads beside the main one; on PostgreSQL a pool of
// its own) and keeps the copy there. The main thread sends it the search as
// plain values and gets the page back as plain values. When the thread is not
// there (it failed to start, or died), the search runs on the main thread as
// it does in an app built without one (tests, the CLI), and a new thread is
// started a while later.
import { Worker } from 'node:worker_threads'
import type { Db } from '../db/index.js'

/** How long after a thread died the next search starts a new one (until then searches run on the main thread). */
const RESTART_MS = 10_000
/** Searches waiting on the thread at most: past it, a search runs on the main thread (bounded memory whatever the load). */
const MAX_WAITING = 1_000

/** What the main thread asks the search thread. */
export type ThreadRequest =
  | { type: 'search'; id: number; args: readonly unknown[] }
  | { type: 'forget' }
  | { type: 'load' }

/** What the search thread answers. */
export type ThreadReply =
  | { type: 'result'; id: number; value: unknown }
  | { type: 'error'; id: number; message: string }
  | { type: 'loaded'; packs: number; ms: number }
  | { type: 'load-failed'; message: string }

/**
 * The thread did not answer: there is none (it died, or was closed, or too many searches wait), or its search
 * failed. The caller answers the search itself, so that what a failure looks like (a database that is down
 * answers 503) is the main thread's, whatever the thread saw.
 */
export class SearchThreadFailed extends Error {}

export interface SearchThreadOptions {
  /** The DATABASE_URL the thread opens (the app's own). */
  databaseUrl: string
  /** Told once the thread's copy of the index has loaded, or could not. */
  onLoaded?: (result: { packs: number; ms: number } | { error: string }) => void
  /** Told when the thread dies (an uncaught error, or it exits): searches run on the main thread until it restarts. */
  onDied?: (error: Error) => void
}

export class SearchThread {
  private worker: Worker | undefined
  private diedAt = Number.NEGATIVE_INFINITY
  private nextId = 1
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  private closed = false
  private loadAsked = false
  private loadedCopy: { packs: number; ms: number } | undefined
  private readonly loadWaiters: Array<(result: { packs: number; ms: number }) => void> = []

  constructor(private readonly options: SearchThreadOptions) {}

  /** Starts the thread and has it load its copy of the index in the background. */
  start(): void {
    this.loadAsked = true
    this.running()?.postMessage({ type: 'load' } satisfies ThreadRequest)
  }

  /** Runs a search on the thread (its arguments and answer are plain values); rejects with SearchThreadFailed. */
  search(args: readonly unknown[]): Promise<unknown> {
    const worker = this.waiting.size < MAX_WAITING ? this.running() : undefined
    if (!worker) return Promise.reject(new SearchThreadFailed('no search thread'))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      worker.postMessage({ type: 'search', id, args } satisfies ThreadRequest)
    })
  }

  /** What the main thread changed retires the thread's kept counts and summaries, as it retires its own. */
  forget(): void {
    this.worker?.postMessage({ type: 'forget' } satisfies ThreadRequest)
  }

  async close(): Promise<void> {
    this.closed = true
    const worker = this.worker
    this.worker = undefined
    this.failWaiting()
    // Nothing of the thread needs an orderly end: it only reads, and its connections go with it.
    if (worker) await worker.terminate()
  }

  /** The thread, started if there is none (and none died within RESTART_MS). */
  private running(): Worker | undefined {
    if (this.worker || this.closed || Date.now() - this.diedAt < RESTART_MS) return this.worker
    // Under tsx (a script run from the sources) the thread runs from the sources too.
    const entry = new URL(import.meta.url.endsWith('.ts') ? './search-worker.ts' : './search-worker.js', import.meta.url)
    const worker = new Worker(entry, { workerData: { databaseUrl: this.options.databaseUrl } })
    // The thread never keeps the process alive: a server ends when its main thread does.
    worker.unref()
    worker.on('message', (reply: ThreadReply) => this.received(reply))
    const died = (error: Error) => {
      if (this.worker !== worker) return
      this.worker = undefined
      this.diedAt = Date.now()
      this.failWaiting()
      this.options.onDied?.(error)
    }
    worker.on('error', died)
    worker.on('exit', (code) => died(new Error(`the search thread exited with code ${code}`)))
    this.worker = worker
    if (this.loadAsked) worker.postMessage({ type: 'load' } satisfies ThreadRequest)
    return worker
  }

  /** Resolves once the thread's copy of the index has loaded (tests, the benchmark). */
  loaded(): Promise<{ packs: number; ms: number }> {
    if (this.loadedCopy) return Promise.resolve(this.loadedCopy)
    return new Promise((resolve) => this.loadWaiters.push(resolve))
  }

  private received(reply: ThreadReply): void {
    if (reply.type === 'loaded') {
      this.loadedCopy = { packs: reply.packs, ms: reply.ms }
      for (const resolve of this.loadWaiters.splice(0)) resolve(this.loadedCopy)
      return this.options.onLoaded?.(this.loadedCopy)
    }
    if (reply.type === 'load-failed') return this.options.onLoaded?.({ error: reply.message })
    const waiter = this.waiting.get(reply.id)
    if (!waiter) return
    this.waiting.delete(reply.id)
    if (reply.type === 'result') waiter.resolve(reply.value)
    else waiter.reject(new SearchThreadFailed(reply.message))
  }

  private failWaiting(): void {
    for (const waiter of this.waiting.values()) waiter.reject(new SearchThreadFailed('the search thread stopped'))
    this.waiting.clear()
  }
}

const threads = new WeakMap<Db, SearchThread>()
/** Every thread of this process, to tell each what this process changed. */
const live = new Set<SearchThread>()

/** Gives `db`'s searches a thread of their own (the server does; an app without one searches on its main thread). */
export function attachSearchThread(db: Db, options: SearchThreadOptions): SearchThread {
  const thread = new SearchThread(options)
  threads.set(db, thread)
  live.add(thread)
  return thread
}

export async function detachSearchThread(db: Db): Promise<void> {
  const thread = threads.get(db)
  if (!thread) return
  threads.delete(db)
  live.delete(thread)
  await thread.close()
}

export function searchThreadOf(db: Db): SearchThread | undefined {
  return threads.get(db)
}

/** Tells every search thread of this process that something searches see changed. */
export function forgetInThreads(): void {
  for (const thread of live) thread.forget()
}
