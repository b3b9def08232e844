// Temporary uploads (docs/decisions.md#uploads): a form's file streamed straight into
// storage, typed from its bytes, optionally joined to a draft, within the
// user's quotas; and their deletion by the owner.
import { randomUUID } from 'node:crypto'
import type { Readable } from 'node:stream'
import { UPLOAD_KINDS, isUuid, type UploadKind } from '../api/constants.js'
import type { Config } from '../config/index.js'
import type { Db } from '../db/index.js'
import { monotonicNow, nowIso } from '../db/time.js'
import { checkDraftQuota, claimDraft, findDraftOwnerId, lockUserQuotas, pendingUsage, type PendingUsage } from './quota-repository.js'
import { BadRequest, Conflict, NotFound, PayloadTooLarge } from '../errors.js'
import { deleteFileRows, insertFile } from '../files/repository.js'
import type { FormPart } from '../http/multipart.js'
import type { FileStore } from '../storage/index.js'
import { formatBytes } from '../web/format.js'
import { acceptFile, receiveFile, type IngestedFile, type ReceivedFile } from './ingest.js'
import { deleteStoredFiles, type PurgeLog } from '../storage/delete.js'
import { deleteUploadRows, findOwnedUpload, insertUpload, type PendingUpload } from './repository.js'

/** What the uploads' use cases work with; `log` is the request's, for failures the client is not told about. */
export interface UploadsDeps {
  db: Db
  store: FileStore
  config: Pick<Config, 'uploadLimits' | 'userQuotas' | 'pendingUploadTtlMs'>
  log: {
    error(details: object, message: string): void
    warn(details: object, message: string): void
  }
}

/** An upload form as src/http/multipart.ts's FileForm reads it: its parts in order, and a watch over the work on the file. */
export interface UploadFormParts {
  parts(): AsyncIterable<FormPart>
  watch<T>(work: Promise<T>): Promise<T>
}

/**
 * Takes in the caller's upload: `file`, and optional `kind` (default media)
 * and `draft_uuid`, in any order. The quotas are checked before the body is
 * read, the stream is capped at what they still hold, and they are checked
 * again when the row is written. On any failure nothing is kept.
 */
export async function createUpload(deps: UploadsDeps, userId: string, form: UploadFormParts): Promise<PendingUpload> {
  const usage = checkQuota(deps.config, await pendingUsage(deps.db, userId), 0)
  const upload = await readUploadForm(deps, userId, form, deps.config.userQuotas.pendingUploadBytes - usage.bytes)
  const file = await acceptFile(deps.store, upload.received, {
    kind: upload.kind,
    maxBytes: deps.config.uploadLimits[upload.kind],
    clientFilename: upload.clientFilename,
  })
  return recordUpload(deps, userId, upload.draftId, upload.kind, file)
}

/** Removes the caller's pending upload and its stored file; someone else's is NotFound, like a missing one. */
export async function deleteUpload(deps: Pick<UploadsDeps, 'db' | 'store' | 'log'>, userId: string, uploadUuid: string): Promise<void> {
  const upload = isUuid(uploadUuid) ? await findOwnedUpload(deps.db, userId, uploadUuid.toLowerCase()) : undefined
  if (!upload) throw new NotFound('upload not found')
  await purgeUploads(deps.db, deps.store, [upload], deps.log)
}

interface UploadForm {
  received: ReceivedFile
  clientFilename: string | undefined
  kind: UploadKind
  draftId: string | null
}

/**
 * Reads the parts in whatever order they come. When `kind` precedes the file
 * its limit applies while streaming; otherwise the largest limit does, and
 * acceptFile checks the kind's own limit afterwards. Either way the stream
 * stops at `quotaLeft`, what the user's pending-upload quota still holds.
 */
async function readUploadForm(deps: UploadsDeps, userId: string, form: UploadFormParts, quotaLeft: number): Promise<UploadForm> {
  let kind: UploadKind | undefined
  let draftId: string | null = null
  let clientFilename: string | undefined
  let received: ReceivedFile | undefined
  try {
    for await (const part of form.parts()) {
      if (part.type === 'file') {
        clientFilename = part.filename
        received = await form.watch(receiveUploadedFile(deps, userId, part.stream, kind, draftId, quotaLeft))
      } else if (part.name === 'kind') {
        kind = parseKind(part.value)
      } else if (part.name === 'draft_uuid') {
        draftId = parseDraftId(part.value)
      }
      // Other text fields (a form's csrf_token, say) are not ours to judge.
    }
  } catch (error) {
    if (received) await discard(deps, received.storageKey, 'could not delete the bytes of a failed form')
    throw error
  }
  if (!received) throw new BadRequest('missing "file" part')
  return { received, clientFilename, kind: kind ?? 'media', draftId }
}

/** The file part into storage, under the kind's limit if the kind came first and never past what the quota holds. */
async function receiveUploadedFile(
  deps: UploadsDeps, userId: string, body: Readable, kind: UploadKind | undefined, draftId: string | null, quotaLeft: number,
): Promise<ReceivedFile> {
  // The create page sends draft_uuid first: a new draft past the drafts cap is refused before the bytes flow.
  if (draftId !== null) await checkNewDraftAllowed(deps, userId, draftId)
  const limits = deps.config.uploadLimits
  const kindLimit = kind ? limits[kind] : Math.max(...Object.values(limits))
  try {
    return await receiveFile(deps.store, body, {
      maxBytes: Math.min(kindLimit, quotaLeft),
      limitName: kind ? `${kind} limit` : 'largest upload limit',
    })
  } catch (error) {
    if (error instanceof PayloadTooLarge && quotaLeft < kindLimit) throw quotaExceeded(deps.config, await pendingUsage(deps.db, userId))
    throw error
  }
}

function parseKind(value: string): UploadKind {
  const kind = UPLOAD_KINDS.find((k) => k === value)
  if (!kind) throw new BadRequest(`unknown kind "${value}": expected one of ${UPLOAD_KINDS.join(', ')}`)
  return kind
}

function parseDraftId(value: string): string {
  if (!isUuid(value)) throw new BadRequest('draft_uuid must be a UUID')
  return value.toLowerCase()
}

/** The file and upload rows, and the draft claim, in one transaction; on failure the stored bytes go too. */
async function recordUpload(deps: UploadsDeps, userId: string, draftId: string | null, kind: UploadKind, file: IngestedFile): Promise<PendingUpload> {
  const now = monotonicNow()
  const upload = {
    id: randomUUID(),
    user_id: userId,
    draft_id: draftId,
    kind,
    file_id: file.id,
    pack_format: file.packFormat,
    created_at: nowIso(now),
    expires_at: nowIso(now + deps.config.pendingUploadTtlMs),
  }
  try {
    await deps.db.transaction().execute(async (trx) => {
      // Counted again under the user's lock: concurrent uploads that each passed the first check cannot all get in.
      await lockUserQuotas(trx, userId)
      checkQuota(deps.config, await pendingUsage(trx, userId), file.size)
      if (draftId && !(await claimDraft(trx, userId, draftId, deps.config.userQuotas.drafts))) throw new NotFound('draft not found')
      await insertFile(trx, file)
      await insertUpload(trx, upload)
    })
  } catch (error) {
    await discard(deps, file.storageKey, 'could not delete the bytes of a failed upload')
    throw error
  }
  return {
    id: upload.id,
    userId,
    draftId,
    kind,
    fileId: file.id,
    storageKey: file.storageKey,
    filename: file.filename,
    contentType: file.contentType,
    size: file.size,
    packFormat: file.packFormat,
    createdAt: upload.created_at,
  }
}

/** Refuses one more upload of `size` bytes (0 before the size is known) when it does not fit the user's quotas. */
function checkQuota(config: Pick<Config, 'userQuotas'>, usage: PendingUsage, size: number): PendingUsage {
  const quotas = config.userQuotas
  if (usage.uploads >= quotas.pendingUploads) {
    throw new Conflict(`you already have ${usage.uploads} pending uploads, the most one user may keep (${quotas.pendingUploads}); `
      + 'publish your drafts or delete some of their files first')
  }
  if (usage.bytes + Math.max(size, 1) > quotas.pendingUploadBytes) throw quotaExceeded(config, usage)
  return usage
}

function quotaExceeded(config: Pick<Config, 'userQuotas'>, usage: PendingUsage): PayloadTooLarge {
  const quota = config.userQuotas.pendingUploadBytes
  return new PayloadTooLarge(`this upload would take your pending uploads over your quota of ${formatBytes(quota, 'exact')} `
    + `(${formatBytes(usage.bytes, 'tenths')} in use); publish your drafts or delete some of their files first`)
}

/** The early form of claimDraft's cap: a draft that does not exist yet may not be made past the drafts cap. */
async function checkNewDraftAllowed(deps: UploadsDeps, userId: string, draftId: string): Promise<void> {
  if ((await findDraftOwnerId(deps.db, draftId)) === undefined) await checkDraftQuota(deps.db, userId, deps.config.userQuotas.drafts)
}

/** Deletes stored bytes on the way out of a failed upload, without hiding the failure that got us here. */
async function discard(deps: UploadsDeps, storageKey: string, message: string): Promise<void> {
  try {
    await deps.store.delete(storageKey)
  } catch (error) {
    deps.log.error({ err: error, storageKey }, message)
  }
}

/**
 * Deletes the uploads' rows and their files' rows in one transaction, then the
 * bytes. Rows go first: a crash in between leaves unreferenced bytes (harmless)
 * rather than rows pointing at nothing.
 */
export async function purgeUploads(db: Db, store: FileStore, uploads: readonly PendingUpload[], log?: PurgeLog): Promise<void> {
  if (uploads.length === 0) return
  await db.transaction().execute(async (trx) => {
    await deleteUploadRows(trx, uploads.map((u) => u.id))
    await deleteFileRows(trx, uploads.map((u) => u.fileId))
  })
  await deleteStoredFiles(store, uploads.map((u) => u.storageKey), log)
}
