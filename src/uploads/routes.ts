// Temporary uploads (CONTRACT §4): a multipart form streamed straight into
// storage, typed from its bytes, optionally joined to a draft; and their
// deletion by the owner.
import { randomUUID } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { UploadKind } from '../config/index.js'
import { checkDraftQuota, claimDraft, findDraftOwnerId } from '../drafts/repository.js'
import { insertFile } from '../files/repository.js'
import { monotonicNow, nowIso } from '../db/time.js'
import { findOwnedUpload, insertUpload, lockUserQuotas, pendingUsage, type PendingUpload, type PendingUsage } from './repository.js'
import { BadRequest, Conflict, NotFound, PayloadTooLarge } from '../errors.js'
import { UPLOAD_KINDS } from './filetypes.js'
import { acceptFile, formatBytes, receiveFile, type IngestedFile, type ReceivedFile } from './ingest.js'
import { purgeUploads } from './pending.js'
import { acceptFileForms, readFileForm } from '../http/multipart.js'
import type { App } from '../http/types.js'
import { Success, bearerAuth, errorResponses, isUuid } from '../api/common.js'
import { TempUpload, toTempUpload } from '../api/uploads.js'

/**
 * The form as documented. It is never validated as a body: the route reads the
 * parts as a stream (request.parts()) and checks each one itself.
 */
const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'The file. Its type is detected from its bytes; the declared type and name are not trusted.' }),
  kind: Type.Optional(Type.String({
    enum: [...UPLOAD_KINDS],
    default: 'media',
    description: 'thumbnail: PNG, JPEG, GIF, WebP. media: those or MP4, WebM. version: a ZIP archive. '
      + 'Limits: thumbnail 5 MiB, media 100 MiB, version 500 MiB by default (413 above).',
  })),
  draft_uuid: Type.Optional(Type.String({ format: 'uuid', description: 'Joins the upload to this create-page draft, creating the draft if it is new.' })),
}, { required: ['file'] })

const UploadParams = Type.Object({ upload_uuid: Type.String({ description: 'UUID of the pending upload.' }) })

export default async function uploadsRoutes(app: App): Promise<void> {
  await acceptFileForms(app, app.config)

  app.post('/api/uploads/', {
    config: { access: 'user' },
    schema: {
      summary: 'Upload a temporary file',
      description: 'multipart/form-data with a `file` part and optional `kind` and `draft_uuid` fields, in any order. '
        + 'The file is kept as a pending upload until a pack uses it or it expires. '
        + 'Each user\'s pending uploads are capped (2 GiB and 500 uploads by default): past the bytes, 413; past the count, '
        + 'or a new draft past the drafts cap (100 by default), 409.',
      tags: ['uploads'],
      security: bearerAuth,
      consumes: ['multipart/form-data'],
      body: UploadForm,
      response: { 200: TempUpload, ...errorResponses(400, 401, 404, 409, 413) },
    },
    // The schema above documents the parts; validating it would look at a body
    // that is not parsed yet (the parts are read as a stream in the handler).
    validatorCompiler: () => () => true,
  }, async (request) => {
    const userId = request.user!.id
    // Checked before the body is read, then the stream is capped at what is left, then checked again when the row is written.
    const usage = checkQuota(app, await pendingUsage(app.db, userId), 0)
    const form = await readUploadForm(app, request, userId, app.config.userQuotas.pendingUploadBytes - usage.bytes)
    const file = await acceptFile(app.store, form.received, {
      kind: form.kind,
      maxBytes: app.config.uploadLimits[form.kind],
      clientFilename: form.clientFilename,
    })
    const upload = await recordUpload(app, request, userId, form.draftId, form.kind, file)
    return toTempUpload(app.config, upload)
  })

  app.post('/api/uploads/:upload_uuid/delete/', {
    config: { access: 'user' },
    schema: {
      summary: 'Delete a temporary upload',
      description: 'Removes the caller\'s pending upload and its stored file. Someone else\'s upload is reported as not found.',
      tags: ['uploads'],
      security: bearerAuth,
      params: UploadParams,
      response: { 200: Success, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const id = request.params.upload_uuid
    const upload = isUuid(id) ? await findOwnedUpload(app.db, request.user!.id, id.toLowerCase()) : undefined
    if (!upload) throw new NotFound('upload not found')
    await purgeUploads(app.db, app.store, [upload], request.log)
    return { success: true }
  })
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
async function readUploadForm(app: App, request: FastifyRequest, userId: string, quotaLeft: number): Promise<UploadForm> {
  let clientFilename: string | undefined
  const form = await readFileForm(request, {
    fileField: 'file',
    onField(name, value) {
      if (name === 'kind') parseKind(value)
      else if (name === 'draft_uuid') parseDraftId(value)
      // Other text fields (a form's csrf_token, say) are not ours to judge.
    },
    async onFile(part, fields) {
      const kind = fields.has('kind') ? parseKind(fields.get('kind')!) : undefined
      clientFilename = part.filename
      // The create page sends draft_uuid first: a new draft past the drafts cap is refused before the bytes flow.
      const draftId = fields.get('draft_uuid')
      if (draftId !== undefined) await checkNewDraftAllowed(app, userId, parseDraftId(draftId))
      const kindLimit = kind ? app.config.uploadLimits[kind] : Math.max(...Object.values(app.config.uploadLimits))
      try {
        return await receiveFile(app.store, part.file, {
          maxBytes: Math.min(kindLimit, quotaLeft),
          limitName: kind ? `${kind} limit` : 'largest upload limit',
        })
      } catch (error) {
        if (error instanceof PayloadTooLarge && quotaLeft < kindLimit) throw quotaExceeded(app, await pendingUsage(app.db, userId))
        throw error
      }
    },
    discard: (received) => app.store.delete(received.id),
  })
  if (!form.file) throw new BadRequest('missing "file" part')
  const kind = form.fields.get('kind')
  const draftId = form.fields.get('draft_uuid')
  return {
    received: form.file,
    clientFilename,
    kind: kind === undefined ? 'media' : parseKind(kind),
    draftId: draftId === undefined ? null : parseDraftId(draftId),
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
async function recordUpload(app: App, request: FastifyRequest, userId: string, draftId: string | null, kind: UploadKind, file: IngestedFile): Promise<PendingUpload> {
  const now = monotonicNow()
  const upload = {
    id: randomUUID(),
    user_id: userId,
    draft_id: draftId,
    kind,
    file_id: file.id,
    pack_format: file.packFormat,
    created_at: nowIso(now),
    expires_at: nowIso(now + app.config.pendingUploadTtlMs),
  }
  try {
    await app.db.transaction().execute(async (trx) => {
      // Counted again under the user's lock: concurrent uploads that each passed the first check cannot all get in.
      await lockUserQuotas(trx, userId)
      checkQuota(app, await pendingUsage(trx, userId), file.size)
      if (draftId && !(await claimDraft(trx, userId, draftId, app.config.userQuotas.drafts))) throw new NotFound('draft not found')
      await insertFile(trx, file)
      await insertUpload(trx, upload)
    })
  } catch (error) {
    await discard(app, request, file.id)
    throw error
  }
  return {
    id: upload.id,
    userId,
    draftId,
    kind,
    fileId: file.id,
    filename: file.filename,
    contentType: file.contentType,
    size: file.size,
    packFormat: file.packFormat,
    createdAt: upload.created_at,
  }
}

/** Refuses one more upload of `size` bytes (0 before the size is known) when it does not fit the user's quotas. */
function checkQuota(app: App, usage: PendingUsage, size: number): PendingUsage {
  const quotas = app.config.userQuotas
  if (usage.uploads >= quotas.pendingUploads) {
    throw new Conflict(`you already have ${usage.uploads} pending uploads, the most one user may keep (${quotas.pendingUploads}); `
      + 'publish your drafts or delete some of their files first')
  }
  if (usage.bytes + Math.max(size, 1) > quotas.pendingUploadBytes) throw quotaExceeded(app, usage)
  return usage
}

function quotaExceeded(app: App, usage: PendingUsage): PayloadTooLarge {
  const quota = app.config.userQuotas.pendingUploadBytes
  return new PayloadTooLarge(`this upload would take your pending uploads over your quota of ${formatBytes(quota)} `
    + `(${approximateBytes(usage.bytes)} in use); publish your drafts or delete some of their files first`)
}

/** "1.2 GiB", "340.5 MiB": for people, where formatBytes would print an exact but unreadable byte count. */
function approximateBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${bytes} bytes`
}

/** The early form of claimDraft's cap: a draft that does not exist yet may not be made past the drafts cap. */
async function checkNewDraftAllowed(app: App, userId: string, draftId: string): Promise<void> {
  if ((await findDraftOwnerId(app.db, draftId)) === undefined) await checkDraftQuota(app.db, userId, app.config.userQuotas.drafts)
}

/** Deletes stored bytes on the way out of a failed upload, without hiding the failure that got us here. */
async function discard(app: App, request: FastifyRequest, fileId: string): Promise<void> {
  try {
    await app.store.delete(fileId)
  } catch (error) {
    request.log.error({ err: error, fileId }, 'could not delete the bytes of a failed upload')
  }
}
