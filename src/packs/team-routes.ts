// A pack's team through the API (docs/site.md#teams): who is in it, invitations, roles, leaving, and handing
// the pack to a member. The rules are src/packs/policy.ts's; the use cases ./team-service.ts's.
import type { FastifyRequest } from 'fastify'
import type { App } from '../http/types.js'
import { NoContent, bearerAuth, errorResponses } from '../api/common.js'
import { Pack, PackParams } from '../api/packs.js'
import { InvitationList, InviteBody, RoleBody, Team, TeamMemberParams, TransferBody } from '../api/teams.js'
import { fileUrls } from '../http/urls.js'
import { toInvitation, toPack, toTeam } from './mapper.js'
import { actorOf, getPack } from './service.js'
import {
  acceptInvite, acceptTransfer, cancelTransfer, changeRole, invite, offerTransfer, pendingFor, removeFromTeam, visibleTransfer, type TeamActor,
} from './team-service.js'

function teamActor(request: FastifyRequest): TeamActor {
  return { ...request.user!, reach: request.tokenReach }
}

export default async function teamRoutes(app: App): Promise<void> {
  app.get('/api/packs/:namespace/:pack_id/team/', {
    schema: {
      summary: 'A pack\'s team',
      description: 'The owner and the members with their roles. Open invitations and an open offer of ownership are shown to the '
        + 'team and staff only. A pack the caller may not see is 404.',
      tags: ['teams'],
      security: bearerAuth,
      params: PackParams,
      response: { 200: Team, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const viewer = request.user
    const pack = await getPack(app.db, request.params.namespace, request.params.pack_id, viewer)
    const actor = viewer ? actorOf(viewer, request.tokenReach) : null
    return toTeam(pack, actor, await visibleTransfer(app, pack, actor))
  })

  app.post('/api/packs/:namespace/:pack_id/team/', {
    config: { access: 'user' },
    schema: {
      summary: 'Invite someone into a pack\'s team',
      description: 'The owner, a maintainer or staff invites a user by name as maintainer or uploader. The invitation grants '
        + 'nothing until the invitee accepts it (POST …/team/accept/) and lapses after 14 days. Inviting yourself is 400; an '
        + 'unknown name 404; a disabled account, the owner, a member or someone already invited 409; someone whose role may not invite 404 (its detail says why).',
      tags: ['teams'],
      security: bearerAuth,
      params: PackParams,
      body: InviteBody,
      response: { 201: Team, ...errorResponses(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    const actor = teamActor(request)
    const pack = await invite(app, actor, request.params.namespace, request.params.pack_id, request.body.username, request.body.role)
    return reply.code(201).send(toTeam(pack, actorOf(actor), await visibleTransfer(app, pack, actorOf(actor))))
  })

  app.post('/api/packs/:namespace/:pack_id/team/accept/', {
    config: { access: 'user' },
    schema: {
      summary: 'Accept an invitation into a pack\'s team',
      description: 'The caller joins the team in the role they were invited as. No open invitation: 404.',
      tags: ['teams'],
      security: bearerAuth,
      params: PackParams,
      response: { 200: Team, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const actor = teamActor(request)
    const pack = await acceptInvite(app, actor, request.params.namespace, request.params.pack_id)
    return toTeam(pack, actorOf(actor), await visibleTransfer(app, pack, actorOf(actor)))
  })

  app.patch('/api/packs/:namespace/:pack_id/team/:username/', {
    config: { access: 'user' },
    schema: {
      summary: 'Change a member\'s role',
      description: 'The owner changes anyone\'s role; a maintainer only an uploader\'s, and only to uploader; staff anyone\'s. '
        + 'Works on an open invitation too. The owner\'s role is not changed this way: ownership changes hands by a transfer.',
      tags: ['teams'],
      security: bearerAuth,
      params: TeamMemberParams,
      body: RoleBody,
      response: { 200: Team, ...errorResponses(400, 401, 404, 409) },
    },
  }, async (request) => {
    const actor = teamActor(request)
    const { namespace, pack_id: packId, username } = request.params
    const pack = await changeRole(app, actor, namespace, packId, username, request.body.role)
    return toTeam(pack, actorOf(actor), await visibleTransfer(app, pack, actorOf(actor)))
  })

  app.delete('/api/packs/:namespace/:pack_id/team/:username/', {
    config: { access: 'user' },
    schema: {
      summary: 'Leave a pack\'s team, decline an invitation, or remove someone',
      description: 'Your own name: you leave the team (or decline your invitation); the owner cannot leave. Another name: the owner, '
        + 'a maintainer or staff removes a member ranked below them, or withdraws an invitation. Takes effect at once on every '
        + 'instance; the member\'s publish tokens stop naming the pack.',
      tags: ['teams'],
      security: bearerAuth,
      params: TeamMemberParams,
      response: { 204: NoContent, ...errorResponses(401, 404, 409) },
    },
  }, async (request, reply) => {
    const { namespace, pack_id: packId, username } = request.params
    await removeFromTeam(app, teamActor(request), namespace, packId, username)
    return reply.code(204).send(null)
  })

  app.post('/api/packs/:namespace/:pack_id/transfer/', {
    config: { access: 'user' },
    schema: {
      summary: 'Offer a pack to a member of its team',
      description: 'The owner offers the pack to an accepted member; it changes hands when they accept (POST …/transfer/accept/), '
        + 'and the offer lapses after 14 days. The pack\'s namespace and pack_id never change: players\' mods hold them. '
        + 'The old owner stays in the team as a maintainer.',
      tags: ['teams'],
      security: bearerAuth,
      params: PackParams,
      body: TransferBody,
      response: { 204: NoContent, ...errorResponses(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    await offerTransfer(app, teamActor(request), request.params.namespace, request.params.pack_id, request.body.username)
    return reply.code(204).send(null)
  })

  app.post('/api/packs/:namespace/:pack_id/transfer/accept/', {
    config: { access: 'user' },
    schema: {
      summary: 'Accept a pack offered to you',
      description: 'The caller becomes the pack\'s owner. No open offer to the caller: 404.',
      tags: ['teams'],
      security: bearerAuth,
      params: PackParams,
      response: { 200: Pack, ...errorResponses(401, 404, 409) },
    },
  }, async (request) => {
    const pack = await acceptTransfer(app, teamActor(request), request.params.namespace, request.params.pack_id)
    return toPack(pack, fileUrls(app.config, request))
  })

  app.delete('/api/packs/:namespace/:pack_id/transfer/', {
    config: { access: 'user' },
    schema: {
      summary: 'Withdraw or decline an offer of a pack',
      description: 'The owner withdraws the open offer, or the member it was made to declines it.',
      tags: ['teams'],
      security: bearerAuth,
      params: PackParams,
      response: { 204: NoContent, ...errorResponses(401, 404) },
    },
  }, async (request, reply) => {
    await cancelTransfer(app, teamActor(request), request.params.namespace, request.params.pack_id)
    return reply.code(204).send(null)
  })

  app.get('/api/invitations/', {
    config: { access: 'user' },
    schema: {
      summary: 'What waits for your answer',
      description: 'Your open invitations into packs\' teams and offers of packs, newest first.',
      tags: ['teams'],
      security: bearerAuth,
      response: { 200: InvitationList, ...errorResponses(401) },
    },
  }, async (request) => (await pendingFor(app, request.user!)).map(toInvitation))
}
