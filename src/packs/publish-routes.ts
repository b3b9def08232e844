// Publishing a draft of the create page as a new pack (docs/decisions.md#publishing): POST /api/draft/publish/.
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import { PublishBody } from '../api/drafts.js'
import { Pack } from '../api/packs.js'
import { fileUrls } from '../http/urls.js'
import { toPack } from './mapper.js'
import { publishDraft } from './publish-service.js'

export default async function publishRoutes(app: App): Promise<void> {
  app.post('/api/draft/publish/', {
    config: { access: 'user' },
    schema: {
      summary: 'Publish a draft as a new pack',
      description: 'Turns the caller\'s draft into a pack and its first version. Needs title and version_name in the draft\'s data '
        + 'and exactly one version upload; the thumbnail (the newest thumbnail upload) and media uploads go along. '
        + 'Namespace: the caller\'s username in lower case; pack_id: the title as a slug of [a-z0-9_-]. '
        + 'Tags are matched to the site\'s tags by name (unknown names are ignored), the category by key. The draft is consumed.',
      tags: ['drafts'],
      security: bearerAuth,
      body: PublishBody,
      response: { 201: Pack, ...errorResponses(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    const pack = await publishDraft(app, request.user!, request.body.draft)
    return reply.code(201).send(toPack(pack, fileUrls(app.config, request)))
  })
}
