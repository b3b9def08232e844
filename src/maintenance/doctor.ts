// The consistency check (`packs doctor`; also run by the server at start-up
// and by the periodic sweep): stored bytes and database rows must agree.
//
// What a crash can leave, given how each operation orders its steps:
// - a put killed midway: an unfinished write (a `.partial` file, an S3
//   multipart upload) that no key names;
// - an upload, a new version or an import killed after its bytes were stored
//   but before its rows committed, and a draft delete, an upload delete or a
//   publish killed after its rows were deleted but before the bytes were:
//   stored bytes with no file row (an orphan object).
// Rows always commit after their bytes are stored and are deleted before the
// bytes are, and publishing is one transaction, so a crash never leaves a row
// without its bytes or half a pack; the check looks for those too (a restore
// from mismatched backups, a manual edit, a bug), and reports them loudly.
//
// Bytes without a row may be an upload in progress (stored, row not yet
// written), so only those untouched for the grace period count as orphans,
// and each is looked up again just before it is deleted.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Readable } from 'node:stream'
import type { Db } from '../db/index.js'
import {
  clearImportMarker, deleteUploadRowsOnly, findFileSummary, findFileUses, listDanglingPackFiles, listDanglingUploads, listFilesByStorageKey,
  listPacksWithoutVersions, listUnreferencedFiles, listUploadsOfPublishedFiles, readImportMarker, storageKeysInUse,
  type FileRowSummary,
  listVersionsWithoutFile,
  type DanglingReference,
  deleteTeamRow, listTeamProblems, type TeamProblem,
} from './doctor-repository.js'
import { deleteFileRows } from '../files/repository.js'
import { deleteUploadRows } from '../uploads/repository.js'
import { nowIso } from '../db/time.js'
import type { FileStore, StoredObject } from '../storage/index.js'
import { formatBytes } from '../web/format.js'

export type FindingKind =
  | 'unfinished-write'
  | 'orphan-object'
  | 'missing-bytes'
  | 'size-mismatch'
  | 'unreferenced-file'
  | 'pack-without-versions'
  | 'dangling-reference'
  | 'stale-upload'
  | 'interrupted-import'
  | 'owner-in-team'
  | 'lapsed-invitation'
  | 'stray-offer'
  | 'dangling-member'

export interface Finding {
  kind: FindingKind
  /** The storage key, row id or pack the finding is about. */
  subject: string
  detail: string
  /** Whether `--repair` may fix it without losing anything that is still reachable. */
  repairable: boolean
  repaired: boolean
  /** For a finding that needs a person: what to do. */
  advice?: string
}

/**
 * - `report`: change nothing;
 * - `storage`: remove only unfinished writes and orphan objects older than the
 *   grace period (what the server does at start-up and in its sweep);
 * - `all`: also the rows that can go safely (`packs doctor --repair`).
 * Published versions, packs and their files are never changed: they are reported.
 */
export type RepairMode = 'report' | 'storage' | 'all'

export interface DoctorOptions {
  repair: RepairMode
  /** Unreferenced bytes and unfinished writes younger than this are left alone (an upload may be in progress). */
  graceMs: number
  now?: number
  /** Epoch ms after which the scan of stored objects stops; the report's `resumeAfter` continues it. */
  deadline?: number
  /** Continue a scan that a deadline stopped: only storage keys after this one. */
  after?: string
  /** Called for each finding, as soon as it is settled (repaired or not). */
  onFinding?(finding: Finding): void
  /**
   * The share of the time the check may work, between 0 and 1 (default 1:
   * flat out, as `packs doctor` runs). The server's own passes run in the
   * background of a live site and rest between steps so that they take at
   * most this share of the event loop.
   */
  dutyCycle?: number
  /**
   * Stops the check between two steps, rests included: the server's passes are given one that aborts when
   * the server closes, so a shutdown never waits for the rest of a pass (on a large store, longer than the
   * grace a shutdown is given). The check then rejects with the signal's reason.
   */
  signal?: AbortSignal
}

export interface DoctorReport {
  checked: { fileRows: number; objects: number; unfinishedWrites: number; packs: number }
  found: number
  repaired: number
  /** Findings not repaired: what makes `packs doctor` exit 1. */
  remaining: number
  byKind: Partial<Record<FindingKind, number>>
  /** Bytes without a row and unfinished writes younger than the grace period, left alone. */
  young: number
  /** Objects not named as this site names its files (another site's or someone's), left alone. */
  foreign: number
  /** False when the deadline stopped the storage scan before the last key. */
  complete: boolean
  /** Where the next check continues, when `complete` is false. */
  resumeAfter?: string
  importInProgress: boolean
}

/** Every storage key this site writes is a file id, a random UUID. */
const OUR_KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
/**
 * Rows looked at per query by the whole-table checks: a few milliseconds each at any size. (500 held the
 * loop 10-70 ms per query on a 100,000-pack site just started, with SQLite's cache still cold.)
 */
const SCAN_WINDOW = 200

/** Requests go first between windows: on SQLite each query holds the event loop while it runs. */
function yieldToRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * Rests between steps so the work takes at most `dutyCycle` of the time: after
 * each stretch of work it sleeps (1 / dutyCycle - 1) times as long. At 100,000
 * packs a pass flat out took half of the event loop from requests for a minute
 * after every start; paced, the requests hardly notice it.
 */
class Pacer {
  private workingSince = performance.now()

  constructor(private readonly dutyCycle: number, private readonly signal?: AbortSignal) {}

  async step(): Promise<void> {
    this.signal?.throwIfAborted()
    const worked = performance.now() - this.workingSince
    // Short stretches just let requests in; a rest is taken once a few milliseconds of work add up.
    if (this.dutyCycle >= 1 || worked < 5) {
      await yieldToRequests()
      if (this.dutyCycle >= 1) this.workingSince = performance.now()
    } else {
      // A rest is three times the stretch before it, however long that was: it ends early when the check is stopped.
      await sleep(worked * (1 / this.dutyCycle - 1), undefined, this.signal ? { signal: this.signal } : undefined)
      this.workingSince = performance.now()
    }
    this.signal?.throwIfAborted()
  }
}
const PAGE = 500
const ORPHAN_BATCH = 100

class Doctor {
  readonly report: DoctorReport = {
    checked: { fileRows: 0, objects: 0, unfinishedWrites: 0, packs: 0 },
    found: 0, repaired: 0, remaining: 0, byKind: {}, young: 0, foreign: 0, complete: true, importInProgress: false,
  }
  private readonly now: number
  private readonly graceMs: number

  private readonly pacer: Pacer

  constructor(private readonly db: Db, private readonly store: FileStore, private readonly options: DoctorOptions) {
    this.pacer = new Pacer(Math.min(1, Math.max(0.01, options.dutyCycle ?? 1)), options.signal)
    this.now = options.now ?? Date.now()
    this.graceMs = options.graceMs
  }

  private get repairAll(): boolean {
    return this.options.repair === 'all'
  }

  /** Unfinished writes and orphan objects may go: not while an import is writing files whose rows come last. */
  private get repairStorage(): boolean {
    return this.options.repair === 'all' || (this.options.repair === 'storage' && !this.report.importInProgress)
  }

  private isOld(date: Date): boolean {
    return date.getTime() <= this.now - this.graceMs
  }

  private async settle(
    finding: Omit<Finding, 'repaired'>,
    repair?: () => Promise<void>,
  ): Promise<void> {
    let repaired = false
    if (finding.repairable && repair) {
      await repair()
      repaired = true
    }
    const settled: Finding = { ...finding, repaired }
    this.report.found += 1
    this.report.byKind[finding.kind] = (this.report.byKind[finding.kind] ?? 0) + 1
    if (repaired) this.report.repaired += 1
    else this.report.remaining += 1
    this.options.onFinding?.(settled)
  }

  async run(): Promise<DoctorReport> {
    this.options.signal?.throwIfAborted()
    await this.checkImport()
    await this.checkRows()
    await this.checkTeams()
    await this.checkStoredBytes()
    await this.checkUnfinishedWrites()
    return this.report
  }

  /** A `packs import` that has not committed its rows: its files are in the store without rows, on purpose. */
  private async checkImport(): Promise<void> {
    const marker = await readImportMarker(this.db)
    if (!marker) return
    this.report.importInProgress = this.options.repair !== 'all'
    await this.settle({
      kind: 'interrupted-import',
      subject: marker.dir,
      detail: `an import started at ${marker.started_at} has not finished: it is running, or it was interrupted and left files without rows`,
      repairable: true,
      advice: 'run the same `packs import` again, or `packs doctor --repair` when it is not running',
    }, this.repairAll ? () => clearImportMarker(this.db) : undefined)
  }

  private async checkRows(): Promise<void> {
    let after = ''
    for (;;) {
      const { packs, scannedThrough } = await listPacksWithoutVersions(this.db, after, SCAN_WINDOW)
      if (scannedThrough === null) break
      for (const pack of packs) {
        await this.settle({
          kind: 'pack-without-versions',
          subject: pack.name,
          detail: 'the pack has no version: the update-check and its page have nothing to offer',
          repairable: false,
          advice: 'publish a version of it, or remove the pack by hand',
        })
      }
      after = scannedThrough
      await this.pacer.step()
    }

    const dangling: DanglingReference[] = []
    after = ''
    for (;;) {
      const { references, scannedThrough } = await listVersionsWithoutFile(this.db, after, SCAN_WINDOW)
      if (scannedThrough === null) break
      dangling.push(...references.slice(0, PAGE - dangling.length))
      after = scannedThrough
      await this.pacer.step()
    }
    after = ''
    for (;;) {
      const { references, scannedThrough } = await listDanglingPackFiles(this.db, after, SCAN_WINDOW)
      if (scannedThrough === null) break
      dangling.push(...references.slice(0, 2 * PAGE - dangling.length))
      after = scannedThrough
      await this.pacer.step()
    }
    dangling.push(...await listDanglingUploads(this.db, PAGE))
    for (const reference of dangling) {
      const upload = reference.kind === 'upload'
      await this.settle({
        kind: 'dangling-reference',
        subject: reference.rowId,
        detail: `${reference.kind} of ${reference.owner} names file ${reference.fileId}, which has no row`,
        repairable: upload,
        ...(upload ? {} : { advice: 'restore the file row and its bytes from a backup' }),
      }, upload && this.repairAll ? () => deleteUploadRowsOnly(this.db, [reference.rowId]) : undefined)
    }

    for (const stale of await listUploadsOfPublishedFiles(this.db, PAGE)) {
      await this.settle({
        kind: 'stale-upload',
        subject: stale.id,
        detail: `pending upload of file ${stale.fileId}, which ${stale.pack} already uses (the sweep would delete the pack's file with it)`,
        repairable: true,
      }, this.repairAll ? () => deleteUploadRowsOnly(this.db, [stale.id]) : undefined)
    }

    after = ''
    for (;;) {
      const { files, scannedThrough } = await listUnreferencedFiles(this.db, nowIso(this.now - this.graceMs), after, SCAN_WINDOW)
      if (scannedThrough === null) break
      for (const file of files) {
        await this.settle({
          kind: 'unreferenced-file',
          subject: file.id,
          detail: `file row (${formatBytes(file.size, 'tenths')}, created ${file.createdAt}) that no upload, version or pack uses`,
          repairable: true,
        }, this.repairAll ? async () => {
          // Row first, then bytes: a crash in between leaves an orphan object, which the next check removes.
          await deleteFileRows(this.db, [file.id])
          await this.store.delete(file.storageKey)
        } : undefined)
      }
      after = scannedThrough
      await this.pacer.step()
    }
  }

  /**
   * Team rows that contradict the pack or have outlived their use (doctor-repository.ts listTeamProblems).
   * Each repair removes one row whose removal takes nothing from anyone: the owner keeps every power without
   * a member row, a lapsed invitation or offer already grants nothing, an offer to someone outside the team
   * is one the owner can make again once they are in it, and a row naming a user or pack that is gone names
   * nobody.
   */
  private async checkTeams(): Promise<void> {
    for (const problem of await listTeamProblems(this.db, nowIso(this.now), PAGE)) {
      await this.settle({
        kind: problem.kind,
        subject: problem.pack,
        detail: teamDetail(problem),
        repairable: true,
      }, this.repairAll ? () => deleteTeamRow(this.db, problem) : undefined)
      await this.pacer.step()
    }
  }

  /**
   * Walks the file rows and the stored objects together, both in key order,
   * so memory stays bounded however large the store: a key on one side only
   * is a row without bytes or bytes without a row.
   */
  private async checkStoredBytes(): Promise<void> {
    const rows = fileRows(this.db, this.options.after ?? '')[Symbol.asyncIterator]()
    const objects = this.store.list(this.options.after ? { after: this.options.after } : {})[Symbol.asyncIterator]()
    let row = await rows.next()
    let object = await objects.next()
    let lastObjectKey = this.options.after ?? ''
    const orphans: StoredObject[] = []
    try {
      for (let steps = 1; !row.done || !object.done; steps++) {
        if (steps % 64 === 0) await this.pacer.step()
        if (this.options.deadline !== undefined && Date.now() > this.options.deadline) {
          this.report.complete = false
          break
        }
        if (!object.done && object.value.key <= lastObjectKey) {
          throw new Error(`the store listed "${object.value.key}" after "${lastObjectKey}": its listing is not in key order, so the check cannot pair rows with objects`)
        }
        const rowKey = row.done ? undefined : row.value.storageKey
        const objectKey = object.done ? undefined : object.value.key
        if (rowKey !== undefined && (objectKey === undefined || rowKey < objectKey)) {
          this.report.checked.fileRows += 1
          await this.missingBytes(row.value as FileRowSummary)
          this.report.resumeAfter = rowKey
          row = await rows.next()
        } else if (objectKey !== undefined && (rowKey === undefined || objectKey < rowKey)) {
          this.report.checked.objects += 1
          lastObjectKey = objectKey
          const stored = object.value as StoredObject
          if (!OUR_KEY.test(stored.key)) this.report.foreign += 1
          else if (!this.isOld(stored.modifiedAt)) this.report.young += 1
          else {
            orphans.push(stored)
            if (orphans.length >= ORPHAN_BATCH) await this.orphanObjects(orphans.splice(0))
          }
          this.report.resumeAfter = objectKey
          object = await objects.next()
        } else {
          this.report.checked.fileRows += 1
          this.report.checked.objects += 1
          lastObjectKey = objectKey!
          const file = row.value as FileRowSummary
          const stored = object.value as StoredObject
          if (file.size !== stored.size) {
            await this.settle({
              kind: 'size-mismatch',
              subject: file.id,
              detail: `the row says ${file.size} bytes, the store holds ${stored.size}: the stored file is damaged`,
              repairable: false,
              advice: 'restore the file from a backup',
            })
          }
          this.report.resumeAfter = rowKey
          row = await rows.next()
          object = await objects.next()
        }
      }
      await this.orphanObjects(orphans.splice(0))
    } finally {
      await rows.return?.()
      await objects.return?.()
    }
    if (this.report.complete) delete this.report.resumeAfter
  }

  /** Bytes without a row, looked up again just before they go (an upload may have written its row meanwhile). */
  private async orphanObjects(candidates: StoredObject[]): Promise<void> {
    if (candidates.length === 0) return
    const repair = this.repairStorage && (this.options.repair === 'all' || !(await readImportMarker(this.db)))
    const inUse = await storageKeysInUse(this.db, candidates.map((c) => c.key))
    for (const orphan of candidates) {
      if (inUse.has(orphan.key)) continue
      await this.settle({
        kind: 'orphan-object',
        subject: orphan.key,
        detail: `${formatBytes(orphan.size, 'tenths')} stored ${orphan.modifiedAt.toISOString()} with no file row`,
        repairable: true,
      }, repair ? async () => {
        // Checked once more, alone: the batch lookup above may be a moment old.
        if ((await storageKeysInUse(this.db, [orphan.key])).size === 0) await this.store.delete(orphan.key)
      } : undefined)
    }
  }

  /** A row whose key the listing did not have: confirmed by reading the row and the bytes again. */
  private async missingBytes(listed: FileRowSummary): Promise<void> {
    const file = await findFileSummary(this.db, listed.id)
    if (!file || (await hasBytes(this.store, file))) return
    const uses = await findFileUses(this.db, file.id)
    const published = [...uses.versions.map((v) => `version ${v}`), ...uses.packs.map((p) => `pack ${p}`)]
    if (published.length > 0) {
      await this.settle({
        kind: 'missing-bytes',
        subject: file.id,
        detail: `PUBLISHED file (${formatBytes(file.size, 'tenths')}) of ${published.join(', ')} has no stored bytes: downloads of it fail`,
        repairable: false,
        advice: `restore key ${file.storageKey} from a backup of the store`,
      })
      return
    }
    const what = uses.uploads.length > 0 ? `pending upload ${uses.uploads.join(', ')}` : 'no upload, version or pack'
    await this.settle({
      kind: 'missing-bytes',
      subject: file.id,
      detail: `file row (${formatBytes(file.size, 'tenths')}) of ${what} has no stored bytes`,
      repairable: true,
    }, this.repairAll ? async () => {
      await this.db.transaction().execute(async (trx) => {
        await deleteUploadRows(trx, uses.uploads)
        await deleteFileRows(trx, [file.id])
      })
    } : undefined)
  }

  private async checkUnfinishedWrites(): Promise<void> {
    for await (const write of this.store.listUnfinished()) {
      this.options.signal?.throwIfAborted()
      this.report.checked.unfinishedWrites += 1
      if (!OUR_KEY.test(write.key)) {
        this.report.foreign += 1
        continue
      }
      if (!this.isOld(write.modifiedAt)) {
        this.report.young += 1
        continue
      }
      const size = write.size === null ? '' : `${formatBytes(write.size, 'tenths')}, `
      await this.settle({
        kind: 'unfinished-write',
        subject: write.id,
        detail: `${size}last written ${write.modifiedAt.toISOString()}, for key ${write.key}: a write that never finished (a crash or a kill mid-upload)`,
        repairable: true,
      }, this.repairStorage ? () => this.store.discardUnfinished(write) : undefined)
    }
  }
}

async function* fileRows(db: Db, after: string): AsyncIterable<FileRowSummary> {
  let cursor = after
  for (;;) {
    const page = await listFilesByStorageKey(db, cursor, PAGE)
    yield* page
    if (page.length < PAGE) return
    cursor = page.at(-1)!.storageKey
  }
}

/** Reads one byte (all of an empty file): a missing object rejects with ENOENT, as for files/service.ts. */
async function hasBytes(store: FileStore, file: FileRowSummary): Promise<boolean> {
  let stream: Readable
  try {
    stream = await store.get(file.storageKey, file.size > 0 ? { start: 0, end: 0 } : undefined)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
  stream.destroy()
  return true
}

export async function runDoctor(db: Db, store: FileStore, options: DoctorOptions): Promise<DoctorReport> {
  return new Doctor(db, store, options).run()
}

/** One line per finding: what it is, and what was done or is to be done. */
export function formatFinding(finding: Finding): string {
  const status = finding.repaired ? 'repaired' : finding.repairable ? 'found' : 'PROBLEM'
  const tail = finding.repaired ? '' : finding.advice ? `; ${finding.advice}` : finding.repairable ? '; packs doctor --repair removes it' : ''
  return `${status.padEnd(8)} ${finding.kind} ${finding.subject}: ${finding.detail}${tail}`
}

export function formatSummary(report: DoctorReport, graceMs: number): string {
  const { checked } = report
  const parts = [
    `checked ${count(checked.fileRows, 'file row')}, ${count(checked.objects, 'stored object')} and ${count(checked.unfinishedWrites, 'unfinished write')}`,
    report.found === 0
      ? 'no problems'
      : `${report.found} found, ${report.repaired} repaired, ${report.remaining} remaining`,
  ]
  const left: string[] = []
  if (report.young > 0) left.push(`${report.young} younger than ${formatDuration(graceMs)} (uploads may be in progress)`)
  if (report.foreign > 0) left.push(`${report.foreign} not named like this site's files`)
  if (left.length > 0) parts.push(`left alone: ${left.join(', ')}`)
  if (!report.complete) parts.push(`stopped at its time limit after key ${report.resumeAfter ?? '(none)'}`)
  return parts.join('; ')
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}

function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`
  if (ms % 60_000 === 0) return `${ms / 60_000}m`
  if (ms % 1000 === 0) return `${ms / 1000}s`
  return `${ms}ms`
}

function teamDetail(problem: TeamProblem): string {
  switch (problem.kind) {
    case 'owner-in-team':
      return `${problem.username} owns the pack and also has a member row in its team`
    case 'lapsed-invitation':
      return problem.what === 'offer'
        ? `the offer of ownership to ${problem.username} lapsed at ${problem.expiresAt ?? '?'} and is still stored (the sweep removes lapsed ones)`
        : `the invitation of ${problem.username} lapsed at ${problem.expiresAt ?? '?'} and is still stored (the sweep removes lapsed ones)`
    case 'stray-offer':
      return `ownership is offered to ${problem.username}, who is not a member of the pack's team`
    case 'dangling-member':
      return `${problem.what === 'offer' ? 'an offer of ownership to' : 'a team row of'} ${problem.username} names a ${problem.pack.startsWith('pack ') ? 'pack' : 'user'} that has no row`
  }
}
