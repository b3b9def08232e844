// Download counting without a database write per download.
// A download is remembered in memory as (UTC day, version, hashed client);
// every few seconds, and when the app closes, the remembered ones
// are written in batches. The database decides what is new: download_seen's
// primary key holds one row per (day, version, client), so a launcher that
// fetches the same archive on every start counts once a day, also across
// instances, workers and restarts. Only rows that were new add to the
// version's and the pack's counters, in the same transaction as the marks.
//
// The client is the one the failure limit counts (clientKey,
// src/auth/addresses.ts): an IPv4 address however it is spelt (a
// dual-stack socket reports 192.0.2.1 as ::ffff:192.0.2.1), and an IPv6
// client by its /64, since a host picks new addresses in its /64 at will and
// could otherwise count one download as many.
//
// Memory is bounded: at most `maxPending` distinct downloads wait here, plus
// one batch being written. When the set fills up it is handed to a write at
// once; if a write is already under way, further new downloads are not
// counted (and the number left out is logged), rather than letting a flood of
// distinct addresses grow the set without end.
import type { Db } from '../db/index.js'
import { clientKey } from '../auth/addresses.js'
import { hmacHex } from '../auth/secrets.js'
import { addPackDayDownloads, addPackDownloads, addVersionDownloads, insertSeen, type SeenRow } from './repository.js'

/** Distinct (day, version, client) waiting to be written; about 200 bytes each, so a few MiB at the bound. */
export const DEFAULT_MAX_PENDING = 20_000
/** How often the waiting downloads are written. */
export const DEFAULT_FLUSH_INTERVAL_MS = 5_000
/** Rows per statement: 3 parameters each, well under SQLite's and PostgreSQL's limits. */
const BATCH_ROWS = 500

export interface DownloadCounterOptions {
  db: Db
  /** The site secret: client addresses are kept only as an HMAC under it, never as they are. */
  secret: string
  /** The app's clock: the UTC day a download counts for. */
  clock: () => number
  maxPending?: number
  flushIntervalMs?: number
  log: { warn(details: object, message: string): void; error(details: object, message: string): void }
}

/** The archive a download fetched: a version and the pack (row id) it belongs to. */
export interface DownloadedVersion {
  versionId: string
  packRowId: string
}

interface PendingDownload extends SeenRow {
  pack_id: string
}

/** The UTC day of a time, as download_seen stores it: "2026-11-23". */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

export class DownloadCounter {
  private pending = new Map<string, PendingDownload>()
  private writing: Promise<number> | undefined
  private dropped = 0
  /** Dropped since the last log line about it. */
  private unreported = 0
  private readonly maxPending: number
  private readonly timer: NodeJS.Timeout
  private closed = false

  constructor(private readonly options: DownloadCounterOptions) {
    this.maxPending = Math.max(1, options.maxPending ?? DEFAULT_MAX_PENDING)
    this.timer = setInterval(() => {
      this.flush().catch((error: unknown) => options.log.error({ err: error }, 'writing download counts failed; they are retried'))
    }, options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS)
    this.timer.unref()
  }

  /** Downloads waiting to be written (not the batch being written). */
  get pendingCount(): number {
    return this.pending.size
  }

  /** New downloads left uncounted since start because the set was full while a batch was being written. */
  get droppedCount(): number {
    return this.dropped
  }

  /**
   * Remembers that `clientAddress` fetched the version's archive now. Cheap and
   * synchronous (a hash and a map entry): nothing waits for the database.
   */
  record(version: DownloadedVersion, clientAddress: string | undefined): void {
    if (this.closed) return
    const day = utcDay(this.options.clock())
    // 128 bits of the HMAC: no raw address is stored, and without the secret the hashes cannot be reversed.
    // An IPv4 client's key is its address as before, so the marks written before this rule still match.
    const client = hmacHex(this.options.secret, `download|${clientKey(clientAddress)}`).slice(0, 32)
    const key = `${day}|${version.versionId}|${client}`
    if (this.pending.has(key)) return
    if (this.pending.size >= this.maxPending) {
      if (this.writing) {
        this.drop()
        return
      }
      // Full and no write under way: hand the set to a write now (flush swaps it synchronously).
      this.flush().catch((error: unknown) => this.options.log.error({ err: error }, 'writing download counts failed; they are retried'))
    }
    this.pending.set(key, { day, version_id: version.versionId, client, pack_id: version.packRowId })
  }

  /**
   * Writes what is waiting (after a write under way, if any) and resolves with
   * the number of downloads that were new, i.e. counted. On a database error
   * the batch goes back to the waiting set (within its bound) and the error is
   * thrown; the next flush tries again.
   */
  async flush(): Promise<number> {
    while (this.writing) await this.writing.catch(() => {})
    if (this.pending.size === 0) return 0
    const batch = [...this.pending.values()]
    this.pending = new Map()
    if (this.unreported > 0) {
      this.options.log.warn({ dropped: this.unreported, max_pending: this.maxPending }, 'downloads left uncounted: the waiting set was full while a batch was being written')
      this.unreported = 0
    }
    this.writing = this.write(batch).finally(() => { this.writing = undefined })
    return this.writing
  }

  /** Stops the timer and writes what is waiting; called when the app closes, before the database does. */
  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    await this.flush()
  }

  private async write(batch: PendingDownload[]): Promise<number> {
    // A fixed order: two instances writing overlapping batches take row locks in the same order (no deadlock).
    batch.sort((a, b) => compare(a.day, b.day) || compare(a.version_id, b.version_id) || compare(a.client, b.client))
    let counted = 0
    for (let start = 0; start < batch.length; start += BATCH_ROWS) {
      const chunk = batch.slice(start, start + BATCH_ROWS)
      try {
        counted += await this.writeChunk(chunk)
      } catch (error) {
        this.requeue(batch.slice(start))
        throw error
      }
    }
    return counted
  }

  /** One transaction: the marks, then +n on each version and pack for the n marks that were new. */
  private async writeChunk(chunk: PendingDownload[]): Promise<number> {
    const packOf = new Map(chunk.map((d) => [d.version_id, d.pack_id]))
    return this.options.db.transaction().execute(async (trx) => {
      const fresh = await insertSeen(trx, chunk.map(({ day, version_id, client }) => ({ day, version_id, client })))
      const perVersion = tally(fresh.map((row) => row.version_id))
      const perPack = new Map<string, number>()
      for (const [versionId, n] of perVersion) {
        const packRowId = packOf.get(versionId)!
        perPack.set(packRowId, (perPack.get(packRowId) ?? 0) + n)
      }
      // Per pack and day as well: trending adds up the last 7 days.
      const perPackDay = tally(fresh.map((row) => `${packOf.get(row.version_id)!} ${row.day}`))
      // Packs before versions, as a yank or a new version takes them (the pack's row lock first, then its
      // versions): two transactions that lock the same rows in opposite orders can deadlock on PostgreSQL.
      for (const packRowId of [...perPack.keys()].sort()) await addPackDownloads(trx, packRowId, perPack.get(packRowId)!)
      for (const versionId of [...perVersion.keys()].sort()) await addVersionDownloads(trx, versionId, perVersion.get(versionId)!)
      for (const key of [...perPackDay.keys()].sort()) {
        const [packRowId, day] = key.split(' ') as [string, string]
        await addPackDayDownloads(trx, packRowId, day, perPackDay.get(key)!)
      }
      return fresh.length
    })
  }

  private drop(): void {
    this.dropped++
    this.unreported++
  }

  /** Puts an unwritten batch back, within the bound; what does not fit is counted as dropped. */
  private requeue(rows: PendingDownload[]): void {
    for (const row of rows) {
      const key = `${row.day}|${row.version_id}|${row.client}`
      if (this.pending.has(key)) continue
      if (this.pending.size >= this.maxPending) this.drop()
      else this.pending.set(key, row)
    }
  }
}

function tally(ids: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1)
  return counts
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
