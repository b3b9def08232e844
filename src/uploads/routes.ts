// Temporary uploads (POST /api/uploads/, POST /api/uploads/{upload_uuid}/delete/).
import type { FastifyRequest } from 'fastify'
import { Success, bearerAuth, errorResponses } from '../api/common.js'
import { TempUpload, UploadForm, UploadParams } from '../api/uploads.js'
import { FileForm, acceptFileForms } from '../http/multipart.js'
import type { App } from '../http/types.js'
import { toTempUpload } from './mapper.js'
import { createUpload, deleteUpload, type UploadsDeps } from './service.js'

export default async function uploadsRoutes(app: App): Promise<void> {
  await acceptFileForms(app, app.config)
  const deps = (request: FastifyRequest): UploadsDeps => ({ db: app.db, store: app.store, config: app.config, log: request.log })

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
    // that is not parsed yet (the service reads the parts as a stream).
    validatorCompiler: () => () => true,
  }, async (request) => {
    const upload = await createUpload(deps(request), request.user!.id, new FileForm(request, 'file'))
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
    await deleteUpload(deps(request), request.user!.id, request.params.upload_uuid)
    return { success: true }
  })
}
