// Managing a published pack: a version's changelog
// and yank, deleting a version, deleting the pack. Owner and staff; anyone
// else gets 404, as for a missing pack.
import { Type } from 'typebox'
import type { App } from '../http/types.js'
import { NoContent, bearerAuth, errorResponses } from '../api/common.js'
import { EditVersionBody, Pack, PackParams, VersionParams } from '../api/packs.js'
import { PACK_ID_HOLD_DAYS } from '../api/constants.js'
import { toPack } from './mapper.js'
import { fileUrls } from '../http/urls.js'
import { deletePack } from './delete-service.js'
import { deleteVersion, editVersion } from './versions-service.js'


export default async function packManageRoutes(app: App): Promise<void> {
  app.patch('/api/packs/:namespace/:pack_id/versions/:version_id/', {
    config: { access: 'user' },
    schema: {
      summary: 'Edit a version: its changelog, or yank / un-yank it',
      description: 'Owner or staff (anyone else: 404). Fields left out stay as they are. A yanked version stays downloadable '
        + 'by its download_url, so nothing already installed breaks, but the update-check, latest_version and the pages '
        + 'skip it; the update-check changes at once, on every instance. Answers the pack.',
      tags: ['packs'],
      security: bearerAuth,
      params: VersionParams,
      body: EditVersionBody,
      response: { 200: Pack, ...errorResponses(400, 401, 403, 404) },
    },
  }, async (request) => {
    const { namespace, pack_id: packId, version_id: versionId } = request.params
    const pack = await editVersion(app, request.user!, namespace, packId, versionId, request.body)
    return toPack(pack, fileUrls(app.config, request))
  })

  app.delete('/api/packs/:namespace/:pack_id/versions/:version_id/', {
    config: { access: 'user' },
    schema: {
      summary: 'Delete a version',
      description: 'Owner or staff (anyone else: 404). The version goes, and its archive too unless another record still uses '
        + 'the file. Deleting the last version that is not yanked leaves the pack with no latest version: the update-check '
        + 'then answers 404 with a detail saying so.',
      tags: ['packs'],
      security: bearerAuth,
      params: VersionParams,
      response: { 204: NoContent, ...errorResponses(401, 403, 404) },
    },
  }, async (request, reply) => {
    const { namespace, pack_id: packId, version_id: versionId } = request.params
    await deleteVersion(app, request.user!, namespace, packId, versionId)
    return reply.code(204).send(null)
  })

  app.delete('/api/packs/:namespace/:pack_id/', {
    config: { access: 'user' },
    schema: {
      summary: 'Delete a pack',
      description: `Owner or staff (anyone else: 404). The pack, its versions, gallery, thumbnail and their files go. Its `
        + `namespace:pack_id is refused to every new pack for ${PACK_ID_HOLD_DAYS} days (409 on publish), so no player's mod `
        + 'silently receives a different pack under a name it trusts. The update-check answers 404 at once.',
      tags: ['packs'],
      security: bearerAuth,
      params: PackParams,
      response: { 204: NoContent, ...errorResponses(401, 403, 404) },
    },
  }, async (request, reply) => {
    await deletePack(app, request.user!, request.params.namespace, request.params.pack_id)
    return reply.code(204).send(null)
  })
}
