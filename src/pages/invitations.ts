// The signed-in user's invitations, /invitations/ (docs/site.md#teams): open
// invitations into packs' teams and offers of packs, newest first, each with
// Accept and Decline. The forms post here and work without JavaScript; with
// it, src/web/client/pages/team.ts sends the same answer to the JSON API
// (src/packs/team-routes.ts) and shows its detail when it is refused. The
// header links this page, with the count, while anything waits.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { DomainError } from '../errors.js'
import type { App } from '../http/types.js'
import { acceptInvite, acceptTransfer, cancelTransfer, pendingFor, removeFromTeam, type TeamActor } from '../packs/team-service.js'
import { timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'
import { sendPage } from '../web/respond.js'
import { userHref } from './pack-card.js'
import { packHref, sentence } from './team.js'

const Params = Type.Object({ namespace: Type.String(), pack_id: Type.String() })
const CsrfOnly = Type.Object({ csrf_token: Type.Optional(Type.String()) })
const PageQuery = Type.Object({ done: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])) })

/** Fixed sentences for ?done=, so a link cannot put words on the page. */
const DONE: Record<string, string> = {
  declined: 'Invitation declined.',
  'offer-declined': 'Offer declined: the pack stays with its owner.',
}

type Answer = 'accept' | 'decline'
type Kind = 'invitation' | 'transfer'

export default async function invitationPages(app: App): Promise<void> {
  app.get('/invitations/', {
    config: { access: 'user' },
    schema: { hide: true, querystring: PageQuery },
  }, async (request, reply) => {
    const done = typeof request.query.done === 'string' ? DONE[request.query.done] : undefined
    return renderInvitations(app, request, reply, { notice: done })
  })

  const answer = (kind: Kind, choice: Answer) => async (
    request: FastifyRequest & { params: { namespace: string; pack_id: string } }, reply: FastifyReply,
  ): Promise<FastifyReply> => {
    const actor: TeamActor = { ...request.user!, reach: request.tokenReach }
    const { namespace, pack_id: packId } = request.params
    try {
      if (kind === 'invitation' && choice === 'accept') {
        const pack = await acceptInvite(app, actor, namespace, packId)
        return reply.redirect(packHref(pack), 303)
      }
      if (kind === 'transfer' && choice === 'accept') {
        const pack = await acceptTransfer(app, actor, namespace, packId)
        return reply.redirect(packHref(pack), 303)
      }
      if (kind === 'invitation') await removeFromTeam(app, actor, namespace, packId, actor.username)
      else await cancelTransfer(app, actor, namespace, packId)
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return renderInvitations(app, request, reply, { error: sentence(error.detail) }, error.status)
    }
    return reply.redirect(`/invitations/?done=${kind === 'invitation' ? 'declined' : 'offer-declined'}`, 303)
  }

  const route = { config: { access: 'user' as const }, schema: { hide: true, params: Params, body: CsrfOnly } }
  app.post('/packs/:namespace/:pack_id/team/accept/', route, answer('invitation', 'accept'))
  app.post('/packs/:namespace/:pack_id/team/decline/', route, answer('invitation', 'decline'))
  app.post('/packs/:namespace/:pack_id/transfer/accept/', route, answer('transfer', 'accept'))
  app.post('/packs/:namespace/:pack_id/transfer/decline/', route, answer('transfer', 'decline'))
}

async function renderInvitations(
  app: App, request: FastifyRequest, reply: FastifyReply, state: { notice?: string | undefined; error?: string }, status = 200,
): Promise<FastifyReply> {
  const pending = await pendingFor(app, request.user!)
  const csrf = request.csrfToken ?? ''
  const items = pending.map((p) => {
    const pack = { namespace: p.namespace, packId: p.packId }
    const base = packHref(pack)
    const api = `/api${base}`
    const kind: Kind = p.kind
    const what = kind === 'transfer'
      ? html`<strong>${p.invitedBy ?? 'Its owner'}</strong> offers you the pack: you would own it, and they would stay as a maintainer.`
      : html`${p.invitedBy ? html`<a href="${userHref(p.invitedBy)}">${p.invitedBy}</a>` : 'Someone'} invites you as <span class="${`role-badge role-${p.role}`}">${p.role}</span>.`
    const form = (choice: Answer): SafeHtml => {
      const path = `${base}${kind === 'transfer' ? 'transfer' : 'team'}/${choice}/`
      const apiUrl = choice === 'accept'
        ? `${api}${kind === 'transfer' ? 'transfer' : 'team'}/accept/`
        : kind === 'transfer' ? `${api}transfer/` : `${api}team/${encodeURIComponent(request.user!.username)}/`
      const label = `${choice === 'accept' ? 'Accept' : 'Decline'} ${kind === 'transfer' ? 'the offer of' : 'the invitation to'} ${p.title}`
      return html`<form class="team-form" method="post" action="${path}" data-api="${apiUrl}" data-method="${choice === 'accept' ? 'POST' : 'DELETE'}"
 ${choice === 'accept' ? html`data-done="${base}"` : null} aria-label="${label}" novalidate>
<input type="hidden" name="csrf_token" value="${csrf}">
<button type="submit" class="${choice === 'accept' ? '' : 'secondary'}">${choice === 'accept' ? 'Accept' : 'Decline'}</button>
<p class="field-error" role="alert"></p>
</form>`
    }
    return html`<li class="card invitation" data-pack="${`${p.namespace}:${p.packId}`}">
<h2 class="invitation-title"><a href="${base}">${p.title}</a> <code class="muted">${p.namespace}:${p.packId}</code></h2>
<p>${what}</p>
<p class="hint">Sent ${timeTag(p.invitedAt)}; lapses ${timeTag(p.expiresAt)}.</p>
<div class="member-actions">${form('accept')}${form('decline')}</div>
</li>`
  })
  const body = html`<article class="invitations-page">
<h1>Invitations</h1>
${alertLine(state.notice, 'notice')}
${alertLine(state.error)}
${items.length === 0
    ? html`<div class="empty card"><p>Nothing waits for your answer. When someone invites you into a pack's team, or offers you a pack, it shows here.</p></div>`
    : html`<ul class="invitations">${items}</ul>`}
</article>`
  return sendPage(app, request, reply, { title: 'Invitations', body, scripts: items.length > 0 ? ['team'] : [] }, status)
}
