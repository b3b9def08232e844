// Following packs through the API (docs/notifications.md#following-packs): follow and unfollow a pack, and the
// caller's list of followed packs. The use cases are ./follows-service.ts's.
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import { PackParams } from '../api/packs.js'
import { Follow, FollowList, FollowListQuery } from '../api/notifications.js'
import { toFollowList } from './mapper.js'
import { followPack, followedPacks, unfollowPack } from './follows-service.js'

export default async function followRoutes(app: App): Promise<void> {
  app.post('/api/packs/:namespace/:pack_id/follow/', {
    config: { access: 'user' },
    schema: {
      summary: 'Follow a pack',
      description: 'The caller follows the pack: each new version of it then arrives in their notifications (GET /api/notifications/), '
        + 'as long as the pack is visible to everyone. Following again changes nothing. A pack the caller may not see is 404.',
      tags: ['follows'],
      security: bearerAuth,
      params: PackParams,
      response: { 200: Follow, ...errorResponses(401, 404) },
    },
  }, async (request) => followPack(app, request.user!, request.params.namespace, request.params.pack_id))

  app.delete('/api/packs/:namespace/:pack_id/follow/', {
    config: { access: 'user' },
    schema: {
      summary: 'Stop following a pack',
      description: 'The caller no longer follows the pack. Not following it already changes nothing. A pack the caller may not see is 404.',
      tags: ['follows'],
      security: bearerAuth,
      params: PackParams,
      response: { 200: Follow, ...errorResponses(401, 404) },
    },
  }, async (request) => unfollowPack(app, request.user!, request.params.namespace, request.params.pack_id))

  app.get('/api/me/follows/', {
    config: { access: 'user' },
    schema: {
      summary: 'The packs you follow',
      description: 'Newest follow first, paginated with limit and offset. A followed pack you may no longer see (staff hid it, or its '
        + 'owner\'s account was disabled) is left out, and back once it is shown again.',
      tags: ['follows'],
      security: bearerAuth,
      querystring: FollowListQuery,
      response: { 200: FollowList, ...errorResponses(400, 401) },
    },
  }, async (request) => toFollowList(await followedPacks(app.db, request.user!, request.query)))
}
