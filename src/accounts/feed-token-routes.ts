// The signed-in user's feed token: GET, POST (a new one, replacing the old) and DELETE /api/me/feed-token/.
// The settings page (src/pages/feeds.ts) does the same with forms.
import type { FastifyRequest } from 'fastify'
import { NoContent, bearerAuth, errorResponses } from '../api/common.js'
import { FEED_TOKEN_PARAM, FeedToken } from '../api/notifications.js'
import { Forbidden } from '../errors.js'
import type { App } from '../http/types.js'
import { publicOrigin } from '../http/urls.js'
import { toFeedToken } from './mapper.js'
import { readFeedToken, resetFeedToken, revokeFeedToken } from './feed-token-service.js'

/**
 * A feed token is shown and made only for a signed-in browser session, as API tokens are made: whoever holds
 * a leaked API token could otherwise take a feed token that outlives the API token's revocation.
 */
function requireSession(request: FastifyRequest, what: string): void {
  if (request.authMethod !== 'session') throw new Forbidden(`the feed token can only be ${what} from a signed-in browser session (Settings → Feeds), not with a token`)
}

export default async function feedTokenRoutes(app: App): Promise<void> {
  app.get('/api/me/feed-token/', {
    config: { access: 'user' },
    schema: {
      summary: 'My feed token',
      description: `The token that opens your Atom feeds in a feed reader (they carry it as ?${FEED_TOKEN_PARAM}=), with the feeds' `
        + 'addresses, or nulls when you have none. It opens your feeds and nothing else: the same parameter on any other address is '
        + 'ignored. Needs a signed-in browser session; a request authenticated by an API token gets 403.',
      tags: ['auth'],
      security: bearerAuth,
      response: { 200: FeedToken, ...errorResponses(401, 403) },
    },
  }, async (request) => {
    requireSession(request, 'shown')
    const user = request.user!
    return toFeedToken(await readFeedToken(app.db, app.gate.siteSecret, user.id), user, publicOrigin(app.config, request))
  })

  app.post('/api/me/feed-token/', {
    config: { access: 'user' },
    schema: {
      summary: 'Make a new feed token',
      description: 'A new feed token, replacing yours if you had one: the old one and every address carrying it stop working at '
        + 'once. Needs a signed-in browser session (with its X-CSRF-Token); a request authenticated by an API token gets 403.',
      tags: ['auth'],
      security: bearerAuth,
      response: { 201: FeedToken, ...errorResponses(401, 403) },
    },
  }, async (request, reply) => {
    requireSession(request, 'made')
    const user = request.user!
    const record = await resetFeedToken(app.db, app.gate.siteSecret, user.id, app.clock())
    return reply.code(201).send(toFeedToken(record, user, publicOrigin(app.config, request)))
  })

  app.delete('/api/me/feed-token/', {
    config: { access: 'user' },
    schema: {
      summary: 'Revoke my feed token',
      description: 'Your feed token stops working at once; 204 also when you had none. Feeds still open in a signed-in browser.',
      tags: ['auth'],
      security: bearerAuth,
      response: { 204: NoContent, ...errorResponses(401, 403) },
    },
  }, async (request, reply) => {
    await revokeFeedToken(app.db, request.user!.id)
    return reply.code(204).send(null)
  })
}
