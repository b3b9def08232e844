// The Atom feeds (RFC 4287): GET /feeds/packs/{namespace}/{pack_id}/, /feeds/users/{username}/ and /feeds/new/.
// Feed readers send no headers, so these routes alone also take a feed token in the query
// (`config.feedToken`, src/auth/plugin.ts), which signs the request in as its user here and nowhere else; a
// browser past the gate opens them as it is (with its session, if any). Answers are validated by ETag: a
// reader that sends If-None-Match gets 304 while nothing it would see has changed.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { FEED_TOKEN_PARAM } from '../api/notifications.js'
import { sha256Hex } from '../auth/secrets.js'
import { noneMatch } from '../http/conditional.js'
import { FEED_ROUTES, packFeedPath, userFeedPath } from '../http/feed-urls.js'
import type { App } from '../http/types.js'
import { publicOrigin } from '../http/urls.js'
import { ATOM_MEDIA_TYPE, renderAtom, type AtomFeed } from '../web/atom.js'
import { newPacksFeedDocument, packFeedDocument, userFeedDocument, type FeedLinks } from './mapper.js'
import { newPacksFeed, packFeed, userFeed } from './service.js'

// The token is read (and refused when wrong) by the auth plugin before validation; here it is only declared.
// Other parameters are let through: readers add their own to bust caches.
const FeedQuery = Type.Object({
  [FEED_TOKEN_PARAM]: Type.Optional(Type.String({ description: 'Your feed token (GET /api/me/feed-token/).' })),
})
const PackFeedParams = Type.Object({ namespace: Type.String(), pack_id: Type.String() })
const UserFeedParams = Type.Object({ username: Type.String() })

/** A feed is a heavy read (it takes a bulkhead slot) that only a feed token, besides the usual credentials, also opens. */
const FEED_CONFIG = { access: 'gate', feedToken: true, heavy: true } as const

function linksOf(app: App, request: FastifyRequest, path: string): FeedLinks {
  return { origin: publicOrigin(app.config, request), path, requested: request.url }
}

/**
 * The feed, or 304 when If-None-Match names what it would be. The ETag is a digest of the document, so it
 * changes with anything the viewer would see (an edited changelog, a yanked version) and never otherwise.
 * no-store as everywhere: the document may carry its token in the self link, and hidden packs for their owner.
 */
function sendFeed(request: FastifyRequest, reply: FastifyReply, feed: AtomFeed): FastifyReply {
  const body = renderAtom(feed)
  const etag = `"${sha256Hex(body).slice(0, 32)}"`
  reply.header('etag', etag)
  reply.header('last-modified', new Date(feed.updated).toUTCString())
  // A browser that opens the feed shows it as XML; nothing in it may run or load anything.
  reply.header('content-security-policy', "default-src 'none'; sandbox")
  if (noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send()
  return reply.type(ATOM_MEDIA_TYPE).send(body)
}

export default async function feedRoutes(app: App): Promise<void> {
  app.get(FEED_ROUTES.pack, {
    config: FEED_CONFIG,
    schema: { hide: true, params: PackFeedParams, querystring: FeedQuery },
  }, async (request, reply) => {
    const feed = await packFeed(app.db, request.params.namespace, request.params.pack_id, request.user)
    return sendFeed(request, reply, packFeedDocument(feed, linksOf(app, request, packFeedPath(feed.pack.namespace, feed.pack.packId))))
  })

  app.get(FEED_ROUTES.user, {
    config: FEED_CONFIG,
    schema: { hide: true, params: UserFeedParams, querystring: FeedQuery },
  }, async (request, reply) => {
    const feed = await userFeed(app.db, request.params.username, request.user)
    return sendFeed(request, reply, userFeedDocument(feed, linksOf(app, request, userFeedPath(feed.user.username))))
  })

  app.get(FEED_ROUTES.newPacks, {
    config: FEED_CONFIG,
    schema: { hide: true, querystring: FeedQuery },
  }, async (request, reply) => {
    const packs = await newPacksFeed(app.db, request.user)
    return sendFeed(request, reply, newPacksFeedDocument(packs, linksOf(app, request, FEED_ROUTES.newPacks)))
  })
}
