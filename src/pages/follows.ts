// The pack page's Follow / Unfollow button (docs/notifications.md#following-packs): a plain form post with the
// session's CSRF token, so it works without JavaScript, answered by a redirect back to the pack's page, to its
// follow box, where the keyboard's focus then starts again. A pack the signed-in user may not see is the
// 404 page, as its page is.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { App } from '../http/types.js'
import { followPack, unfollowPack } from '../packs/follows-service.js'
import { packHref } from './team.js'

const Params = Type.Object({ namespace: Type.String(), pack_id: Type.String() })
const CsrfOnly = Type.Object({ csrf_token: Type.Optional(Type.String()) })

/** The id of the pack page's follow box (src/pages/pack.ts): where the redirect lands. */
export const FOLLOW_BOX_ID = 'follow'

export default async function followPages(app: App): Promise<void> {
  const answer = (follow: boolean) => async (
    request: FastifyRequest & { params: { namespace: string; pack_id: string } }, reply: FastifyReply,
  ): Promise<FastifyReply> => {
    const { namespace, pack_id: packId } = request.params
    await (follow ? followPack : unfollowPack)(app, request.user!, namespace, packId)
    return reply.redirect(`${packHref({ namespace: namespace.toLowerCase(), packId: packId.toLowerCase() })}#${FOLLOW_BOX_ID}`, 303)
  }
  const route = { config: { access: 'user' as const }, schema: { hide: true, params: Params, body: CsrfOnly } }
  app.post('/packs/:namespace/:pack_id/follow/', route, answer(true))
  app.post('/packs/:namespace/:pack_id/unfollow/', route, answer(false))
}
