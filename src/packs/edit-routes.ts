// Editing a pack's page through the API: PATCH on the pack.
// The edit page (src/pages/edit.ts) calls the same endpoint.
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import { EditPackBody, Pack, PackParams } from '../api/packs.js'
import { toPack } from './mapper.js'
import { fileUrls } from '../http/urls.js'
import { editPack } from './edit-service.js'

export default async function packEditRoutes(app: App): Promise<void> {
  app.patch('/api/packs/:namespace/:pack_id/', {
    config: { access: 'user' },
    schema: {
      summary: 'Edit a pack',
      description: 'Owner or staff (anyone else: 404, as for a missing pack). Changes the page fields: title (the pack_id never '
        + 'changes: it is what every player\'s mod asks for), summary, description, category, tags, thumbnail and the gallery. '
        + 'Fields left out stay as they are. `revision` is the pack\'s revision the edit started from: if the pack was edited '
        + 'since, the answer is 409 and nothing changes. Each edit that changes something adds 1 to the revision and is '
        + 'recorded in the audit log; updated_at is left alone (it tells of new versions). New thumbnail and gallery images '
        + 'are pending uploads of the caller (POST /api/uploads/); they stop being pending, and the files of a replaced '
        + 'thumbnail and of removed media are deleted. Answers the pack as it now is.',
      tags: ['packs'],
      security: bearerAuth,
      params: PackParams,
      body: EditPackBody,
      response: { 200: Pack, ...errorResponses(400, 401, 403, 404, 409) },
    },
  }, async (request) => {
    const { namespace, pack_id: packId } = request.params
    const pack = await editPack(app, request.user!, namespace, packId, request.body, request.log)
    return toPack(pack, fileUrls(app.config, request))
  })
}
