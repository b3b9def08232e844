// Staff hide and unhide packs: POST /api/packs/{namespace}/{pack_id}/hide/ and
// /unhide/ (src/moderation/pack-service.ts).
import type { FastifyRequest } from 'fastify'
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import { ModerationBody, Pack, PackParams } from '../api/packs.js'
import { toPack } from '../packs/mapper.js'
import { fileUrls } from '../http/urls.js'
import { setPackHidden } from './pack-service.js'

/**
 * The reason is optional, so is the body: a POST without one (curl -X POST, no
 * Content-Type) is taken as `{}` before validation. A body that is there is
 * validated as sent (an empty JSON body is still a 400).
 */
export async function noBodyIsEmpty(request: FastifyRequest): Promise<void> {
  if (request.body === undefined && request.headers['content-type'] === undefined) request.body = {}
}

export default async function packModerationRoutes(app: App): Promise<void> {
  for (const hidden of [true, false]) {
    app.post(`/api/packs/:namespace/:pack_id/${hidden ? 'hide' : 'unhide'}/`, {
      config: { access: 'staff' },
      preValidation: noBodyIsEmpty,
      schema: {
        summary: hidden ? 'Hide a pack (staff only)' : 'Unhide a pack (staff only)',
        description: hidden
          ? 'Takes the pack down without deleting anything: from now on only its owner and staff see it (the listing, '
            + 'its page and the API leave it out for everyone else), and the update-check answers 404 for it on every '
            + 'instance at once. The optional reason goes into the audit log. Hiding a hidden pack changes nothing.'
          : 'Shows a hidden pack to everyone again, as it was, and the update-check offers its newest version again. '
            + 'The optional reason goes into the audit log. Unhiding a visible pack changes nothing.',
        tags: ['moderation'],
        security: bearerAuth,
        params: PackParams,
        body: ModerationBody,
        response: { 200: Pack, ...errorResponses(400, 401, 403, 404) },
      },
    }, async (request) => {
      const { namespace, pack_id: packId } = request.params
      const pack = await setPackHidden(app, request.user!, namespace, packId, hidden, request.body?.reason)
      return toPack(pack, fileUrls(app.config, request))
    })
  }
}
