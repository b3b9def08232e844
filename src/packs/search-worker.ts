// The search thread's entry (search-thread.ts says why it exists): it opens
// its own handle on the site's database, keeps the in-memory copy of the index
// there, and answers each search it is sent with what the main thread would
// have answered (searchPacksHere, the same code).
import os from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { openDatabase } from '../db/index.js'
import { searchSnapshotOf } from './search-memory.js'
import { forgetFacetCounts, searchPacksHere } from './search-service.js'
import type { ThreadReply, ThreadRequest } from './search-thread.js'

/** How much lower than the main thread, in nice steps (10: about a tenth of the main thread's share of a contended core). */
const SEARCH_THREAD_NICER = 10

if (!parentPort) throw new Error('search-worker.ts runs as a worker thread (search-thread.ts starts it)')
const port = parentPort
// The thread yields the processor to the main thread: a search waiting a moment longer costs little, an
// update-check waiting behind a search's pass costs a game's start. On Linux this lowers this thread alone
// (a thread's priority is its own there); where it cannot be lowered, the thread runs at the process's.
try {
  os.setPriority(Math.min(19, os.getPriority() + SEARCH_THREAD_NICER))
} catch {}
const { databaseUrl } = workerData as { databaseUrl: string }
const db = await openDatabase(databaseUrl)

const reply = (message: ThreadReply) => port.postMessage(message)
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

port.on('message', (message: ThreadRequest) => {
  switch (message.type) {
    case 'forget':
      forgetFacetCounts()
      return
    case 'load': {
      const started = performance.now()
      const snapshot = searchSnapshotOf(db)
      snapshot.loaded(db).then(
        () => reply({ type: 'loaded', packs: snapshot.size, ms: Math.round(performance.now() - started) }),
        (error: unknown) => reply({ type: 'load-failed', message: messageOf(error) }),
      )
      return
    }
    case 'search': {
      const [search, page, now] = message.args as Parameters<typeof searchPacksHere> extends [unknown, ...infer Rest] ? Rest : never
      searchPacksHere(db, search, page, now).then(
        (value) => reply({ type: 'result', id: message.id, value }),
        (error: unknown) => reply({ type: 'error', id: message.id, message: messageOf(error) }),
      )
    }
  }
})
