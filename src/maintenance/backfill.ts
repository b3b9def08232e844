// Filling in what files stored by older versions lack:
// each file without a SHA-1 is streamed from storage once, hashed (SHA-1,
// and SHA-256 checked against its row), and, when it is a version archive
// whose declaration was never read, its pack.mcmeta and folders are read
// too (src/uploads/archives.ts). Runs in the background after the server
// listens; it is idempotent, so several instances or a restart mid-way only
// repeat reads. A file that cannot be read is logged and passed over (the
// consistency check, `packs doctor`, reports missing bytes).
import { createHash } from 'node:crypto'
import type { Db } from '../db/index.js'
import type { FileStore } from '../storage/index.js'
import { inspectArchive } from '../uploads/archives.js'
import { reindexPack } from '../packs/search-service.js'
import { filesWithoutSha1, setFileDeclaration, setFileSha1, type FileToFill } from './backfill-repository.js'

/** Files read per query; one at a time from storage, so the back-fill never competes much with requests. */
const PAGE = 100

export interface BackfillLog {
  info(obj: object, msg: string): void
  warn(obj: object, msg: string): void
}

export interface BackfillReport {
  filled: number
  declarations: number
  failed: number
}

/**
 * Fills every file that lacks a SHA-1. `packChanged` is called for each pack
 * whose archive was filled, so an update-check answer cached meanwhile (with
 * sha1 null) is dropped on every instance.
 */
export async function backfillFiles(
  db: Db,
  store: FileStore,
  packChanged: (namespace: string, packId: string) => Promise<void> | void,
  log?: BackfillLog,
): Promise<BackfillReport> {
  const report: BackfillReport = { filled: 0, declarations: 0, failed: 0 }
  let afterId = ''
  for (;;) {
    const page = await filesWithoutSha1(db, afterId, PAGE)
    if (page.length === 0) break
    for (const file of page) {
      try {
        await fillOne(db, store, file, report)
        if (file.pack) await packChanged(file.pack.namespace, file.pack.packId)
      } catch (error) {
        report.failed++
        log?.warn({ err: error, fileId: file.id }, 'back-fill: could not read a stored file; it keeps no SHA-1 until it can be read')
      }
    }
    afterId = page.at(-1)!.id
  }
  if (report.filled + report.failed > 0) log?.info({ ...report }, 'back-fill of file hashes done')
  return report
}

async function fillOne(db: Db, store: FileStore, file: FileToFill, report: BackfillReport): Promise<void> {
  const sha1 = createHash('sha1')
  const sha256 = createHash('sha256')
  let bytes = 0
  for await (const chunk of await store.get(file.storageKey)) {
    sha1.update(chunk as Buffer)
    sha256.update(chunk as Buffer)
    bytes += (chunk as Buffer).length
  }
  const digest = sha256.digest('hex')
  // The bytes are not the ones recorded: keep no SHA-1 that would vouch for them.
  if (digest !== file.sha256 || bytes !== file.size) throw new Error(`stored bytes differ from the row (${bytes} bytes, SHA-256 ${digest})`)
  if (file.needsDeclaration) {
    const archive = await inspectArchive(store, file.storageKey, file.size)
    const pack = file.pack
    // The declaration gives the pack its kind and releases, which search filters by: its entry is written
    // again in the same transaction.
    await db.transaction().execute(async (trx) => {
      await setFileDeclaration(trx, file.id, archive.declaration)
      if (pack) await reindexPack(trx, pack.rowId)
    })
    report.declarations++
  }
  await setFileSha1(db, file.id, sha1.digest('hex'))
  report.filled++
}
