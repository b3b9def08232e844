// Temporary uploads (CONTRACT §4): a multipart form streamed straight into
// storage, typed from its bytes, optionally joined to a draft; and their
// deletion by the owner.
import { randomUUID } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { UploadKind } from '../config.js'
import { claimDraft } from '../db/drafts.js'
import { insertFile } from '../db/files.js'
import { monotonicNow, nowIso } from '../db/time.js'
import { findOwnedUpload, insertUpload, type PendingUpload } from '../db/uploads.js'
import { BadRequest, NotFound } from '../domain/errors.js'
import { UPLOAD_KINDS } from '../domain/filetypes.js'
import { acceptFile, receiveFile, type IngestedFile, type ReceivedFile } from '../domain/ingest.js'
import { purgeUploads } from '../domain/pending.js'
import { acceptFileForms, readFileForm } from '../http/multipart.js'
import type { App } from '../http/types.js'
import { Success, bearerAuth, errorResponses, isUuid } from '../schemas/common.js'
import { TempUpload, toTempUpload } from '../schemas/uploads.js'

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
        + 'The file is kept as a pending upload until a pack uses it or it expires.',
      tags: ['uploads'],
      security: bearerAuth,
      consumes: ['multipart/form-data'],
      body: UploadForm,
      response: { 200: TempUpload, ...errorResponses(400, 401, 404, 413) },
    },
    // The schema above documents the parts; validating it would look at a body
    // that is not parsed yet (the parts are read as a stream in the handler).
    validatorCompiler: () => () => true,
  }, async (request) => {
    const form = await readUploadForm(app, request)
    const file = await acceptFile(app.store, form.received, {
      kind: form.kind,
      maxBytes: app.config.uploadLimits[form.kind],
      clientFilename: form.clientFilename,
    })
    const upload = await recordUpload(app, request, request.user!.id, form.draftId, form.kind, file)
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
    await purgeUploads(app.db, app.store, [upload])
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
 * acceptFile checks the kind's own limit afterwards.
 */
async function readUploadForm(app: App, request: FastifyRequest): Promise<UploadForm> {
  let clientFilename: string | undefined
  const form = await readFileForm(request, {
    fileField: 'file',
    onField(name, value) {
      if (name === 'kind') parseKind(value)
      else if (name === 'draft_uuid') parseDraftId(value)
      // Other text fields (a form's csrf_token, say) are not ours to judge.
    },
    onFile(part, fields) {
      const kind = fields.has('kind') ? parseKind(fields.get('kind')!) : undefined
      clientFilename = part.filename
      return receiveFile(app.store, part.file, {
        maxBytes: kind ? app.config.uploadLimits[kind] : Math.max(...Object.values(app.config.uploadLimits)),
        limitName: kind ? `${kind} limit` : 'largest upload limit',
      })
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
      if (draftId && !(await claimDraft(trx, userId, draftId))) throw new NotFound('draft not found')
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

/** Deletes stored bytes on the way out of a failed upload, without hiding the failure that got us here. */
async function discard(app: App, request: FastifyRequest, fileId: string): Promise<void> {
  try {
    await app.store.delete(fileId)
  } catch (error) {
    request.log.error({ err: error, fileId }, 'could not delete the bytes of a failed upload')
  }
}
