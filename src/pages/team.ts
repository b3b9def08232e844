// A pack's team page, /packs/{ns}/{id}/team/ (docs/site.md#teams): the owner,
// the members with their roles and, to the team and staff, open invitations
// and an open offer of ownership. Whoever the policy (src/packs/policy.ts)
// lets gets the forms: invite by name (a user autocomplete with the script),
// change a role, remove, withdraw an invitation, offer the pack to a member,
// withdraw that offer, leave. Each form posts here and works without
// JavaScript; with it, src/web/client/pages/team.ts sends the same change to
// the JSON API (src/packs/team-routes.ts, its data-api) and shows the API's
// detail when it is refused. Both call the same service, so both refuse alike.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { BadRequest, DomainError, NotFound } from '../errors.js'
import type { App } from '../http/types.js'
import { MEMBER_ROLES, may, type MemberRole, type PackActor, type PackRole } from '../packs/policy.js'
import { actorOf, findPack, type PackDetail } from '../packs/service.js'
import { changeRole, invite, offerTransfer, cancelTransfer, removeFromTeam, visibleTransfer, type TeamActor } from '../packs/team-service.js'
import { timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'
import { sendPage } from '../web/respond.js'
import { userHref } from './pack-card.js'

const Params = Type.Object({ namespace: Type.String(), pack_id: Type.String() })
const MemberParams = Type.Object({ namespace: Type.String(), pack_id: Type.String(), username: Type.String() })
const InviteForm = Type.Object({ username: Type.Optional(Type.String()), role: Type.Optional(Type.String()), csrf_token: Type.Optional(Type.String()) })
const RoleForm = Type.Object({ role: Type.Optional(Type.String()), csrf_token: Type.Optional(Type.String()) })
const TransferForm = Type.Object({ username: Type.Optional(Type.String()), csrf_token: Type.Optional(Type.String()) })
const CsrfOnly = Type.Object({ csrf_token: Type.Optional(Type.String()) })
const PageQuery = Type.Object({ done: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])) })

/** As the API's InviteBody allows. */
const MAX_USERNAME_LENGTH = 64

/** What a successful form post says on the page it lands on (?done=...): fixed sentences, so a link cannot put words on the page. */
const DONE: Record<string, string> = {
  invited: 'Invitation sent. It grants nothing until it is accepted, and lapses after 14 days.',
  role: 'Role changed.',
  removed: 'Removed from the team.',
  withdrawn: 'Invitation withdrawn.',
  offered: 'Ownership offered. The pack changes hands when they accept.',
  'offer-withdrawn': 'Offer of ownership withdrawn.',
}

/** A pack's page and its team page, by the pack's namespace:pack_id. */
export function packHref(pack: Pick<PackDetail, 'namespace' | 'packId'>): string {
  return `/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/`
}
export function teamHref(pack: Pick<PackDetail, 'namespace' | 'packId'>): string {
  return `${packHref(pack)}team/`
}
function apiBase(pack: Pick<PackDetail, 'namespace' | 'packId'>): string {
  return `/api${packHref(pack)}`
}

/** A team's people in the order a reader expects: the owner, then maintainers, then uploaders; open invitations last. */
interface Person {
  username: string
  role: PackRole
  accepted: boolean
  expiresAt: string | null
  disabled: boolean
}

const RANK: Record<PackRole, number> = { owner: 0, maintainer: 1, uploader: 2 }

function peopleOf(pack: PackDetail, seesPending: boolean): Person[] {
  const members = pack.team
    .filter((m) => m.accepted || seesPending)
    .map((m) => ({ username: m.username, role: m.role, accepted: m.accepted, expiresAt: m.expiresAt, disabled: m.disabled }))
  // A stable sort: within a role, by when they joined (the order the repository gives).
  members.sort((a, b) => Number(b.accepted) - Number(a.accepted) || RANK[a.role] - RANK[b.role])
  return [{ username: pack.owner, role: 'owner', accepted: true, expiresAt: null, disabled: pack.ownerDisabled }, ...members]
}

function who(person: Person): SafeHtml {
  return html`<a class="member-name" href="${userHref(person.username)}">${person.username}</a>
<span class="${`role-badge role-${person.role}`}">${person.role}</span>${person.accepted ? null : html` <span class="invited-badge">invited</span>`}${person.disabled
    ? html` <span class="hidden-badge">Disabled</span>` : null}`
}

/** The team as the pack page lists it: the owner first, then maintainers and uploaders; invitations only when `seesPending`. */
export function teamList(pack: PackDetail, seesPending: boolean): SafeHtml {
  return html`<ul class="team-list">${peopleOf(pack, seesPending).map((p) => html`<li class="team-member">${who(p)}</li>`)}</ul>`
}

export default async function teamPages(app: App): Promise<void> {
  app.get('/packs/:namespace/:pack_id/team/', {
    config: { access: 'gate' },
    schema: { hide: true, params: Params, querystring: PageQuery },
  }, async (request, reply) => {
    const done = typeof request.query.done === 'string' ? DONE[request.query.done] : undefined
    return renderTeamPage(app, request, reply, request.params, { notice: done })
  })

  /** Runs one change from a form: on success back to the team page with its notice, on a refusal the page again with the reason. */
  const change = async (
    request: FastifyRequest & { params: { namespace: string; pack_id: string } }, reply: FastifyReply, done: keyof typeof DONE,
    run: (actor: TeamActor) => Promise<unknown>, form?: FormState, leaving = false,
  ) => {
    try {
      await run({ ...request.user!, reach: request.tokenReach })
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return renderTeamPage(app, request, reply, request.params, { error: sentence(error.detail), form }, error.status, error)
    }
    const pack = await findPack(app.db, request.params.namespace, request.params.pack_id, request.user)
    // Someone who left lands on the pack's page (the team's forms are no longer theirs); one who left a hidden
    // pack may no longer see it, and lands on their invitations page.
    if (!pack) return reply.redirect('/invitations/', 303)
    return reply.redirect(leaving ? packHref(pack) : `${teamHref(pack)}?done=${done}`, 303)
  }

  app.post('/packs/:namespace/:pack_id/team/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params, body: InviteForm },
  }, async (request, reply) => {
    const username = (request.body.username ?? '').trim()
    const roleText = request.body.role ?? ''
    return change(request, reply, 'invited', async (actor) => {
      if (username === '') throw new BadRequest('type the name of the person to invite')
      if (username.length > MAX_USERNAME_LENGTH) throw new BadRequest(`a username has at most ${MAX_USERNAME_LENGTH} characters`)
      await invite(app, actor, request.params.namespace, request.params.pack_id, username, roleFrom(roleText))
    }, { username: username.slice(0, MAX_USERNAME_LENGTH), role: roleText })
  })

  app.post('/packs/:namespace/:pack_id/team/:username/role/', {
    config: { access: 'user' },
    schema: { hide: true, params: MemberParams, body: RoleForm },
  }, async (request, reply) => change(request, reply, 'role', async (actor) => {
    const { namespace, pack_id: packId, username } = request.params
    await changeRole(app, actor, namespace, packId, username, roleFrom(request.body.role ?? ''))
  }))

  app.post('/packs/:namespace/:pack_id/team/:username/remove/', {
    config: { access: 'user' },
    schema: { hide: true, params: MemberParams, body: CsrfOnly },
  }, async (request, reply) => {
    const { namespace, pack_id: packId, username } = request.params
    // Whether it was an invitation decides the notice; read before it goes.
    const before = await findPack(app.db, namespace, packId, request.user)
    const wasInvitation = before?.team.some((m) => m.username.toLowerCase() === username.toLowerCase() && !m.accepted) === true
    const self = username.toLowerCase() === request.user!.username.toLowerCase()
    return change(request, reply, wasInvitation ? 'withdrawn' : 'removed', async (actor) => {
      await removeFromTeam(app, actor, namespace, packId, username)
    }, undefined, self)
  })

  app.post('/packs/:namespace/:pack_id/transfer/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params, body: TransferForm },
  }, async (request, reply) => change(request, reply, 'offered', async (actor) => {
    const username = (request.body.username ?? '').trim()
    if (username === '' || username.length > MAX_USERNAME_LENGTH) throw new BadRequest('choose the member to offer the pack to')
    await offerTransfer(app, actor, request.params.namespace, request.params.pack_id, username)
  }))

  app.post('/packs/:namespace/:pack_id/transfer/withdraw/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params, body: CsrfOnly },
  }, async (request, reply) => change(request, reply, 'offer-withdrawn', async (actor) => {
    await cancelTransfer(app, actor, request.params.namespace, request.params.pack_id)
  }))
}

function roleFrom(text: string): MemberRole {
  const role = MEMBER_ROLES.find((r) => r === text)
  if (!role) throw new BadRequest('choose a role: maintainer or uploader')
  return role
}

export function sentence(detail: string): string {
  const text = detail.charAt(0).toUpperCase() + detail.slice(1)
  return /[.!?…]$/.test(text) ? text : `${text}.`
}

/** What the invite form held when it was refused, shown again. */
interface FormState {
  username?: string
  role?: string
}

interface PageState {
  notice?: string | undefined
  error?: string
  form?: FormState | undefined
}

async function renderTeamPage(
  app: App, request: FastifyRequest, reply: FastifyReply, params: { namespace: string; pack_id: string }, state: PageState,
  status = 200, cause?: DomainError,
): Promise<FastifyReply> {
  const user = request.user
  const pack = await findPack(app.db, params.namespace, params.pack_id, user)
  // A refusal about a pack the caller cannot see is that refusal (a 404 page), not this page.
  if (!pack) throw cause ?? new NotFound(`there is no pack "${params.namespace.toLowerCase()}:${params.pack_id.toLowerCase()}"`)
  const actor = user ? actorOf(user, request.tokenReach) : null
  const transfer = await visibleTransfer(app, pack, actor)
  const view: TeamView = { pack, actor, username: user?.username ?? null, csrf: request.csrfToken ?? '', transfer, state }
  const scripted = actor !== null && (may(actor, 'invite', pack) || may(actor, 'leave', pack) || may(actor, 'transfer', pack))
  return sendPage(app, request, reply, { title: `Team of ${pack.title}`, body: teamBody(view), scripts: scripted ? ['team'] : [] }, status)
}

interface TeamView {
  pack: PackDetail
  actor: PackActor | null
  username: string | null
  csrf: string
  transfer: { toUsername: string; expiresAt: string } | null
  state: PageState
}

function can(view: TeamView, action: 'invite' | 'leave' | 'transfer' | 'see-pending'): boolean {
  return view.actor !== null && may(view.actor, action, view.pack)
}

function teamBody(view: TeamView): SafeHtml {
  const { pack } = view
  const people = peopleOf(pack, can(view, 'see-pending'))
  return html`<article class="team-page">
<p class="breadcrumb"><a href="${packHref(pack)}">${pack.title}</a></p>
<h1>Team of ${pack.title}</h1>
<p class="hint">The owner holds every power over the pack. Maintainers do everything but delete it, hand it over or change
another maintainer's role; uploaders publish new versions and edit changelogs. An invitation grants nothing until it is accepted.</p>
${alertLine(view.state.notice, 'notice')}
${alertLine(view.state.error)}
<section aria-labelledby="members-heading">
<h2 id="members-heading">Members <span class="muted count">(${people.filter((p) => p.accepted).length})</span></h2>
<ul class="team-members">${people.map((person) => memberItem(person, view))}</ul>
</section>
${can(view, 'invite') ? inviteForm(view) : null}
</article>`
}

/** A form that posts `action` here, or with the script sends `method` to `api` (body: its named fields but the token). */
function teamForm(view: TeamView, options: {
  action: string; api: string; method: 'POST' | 'PATCH' | 'DELETE'; label: string; confirm?: string; done?: string; className?: string
}, fields: SafeHtml | null, button: SafeHtml): SafeHtml {
  return html`<form class="${`team-form ${options.className ?? ''}`.trim()}" method="post" action="${options.action}" data-api="${options.api}"
 data-method="${options.method}"${options.confirm ? html` data-confirm="${options.confirm}"` : null}${options.done ? html` data-done="${options.done}"` : null} aria-label="${options.label}" novalidate>
<input type="hidden" name="csrf_token" value="${view.csrf}">${fields}${button}
<p class="field-error" role="alert"></p>
</form>`
}

function memberItem(person: Person, view: TeamView): SafeHtml {
  const { pack, actor } = view
  const name = person.username
  const memberPath = `${teamHref(pack)}${encodeURIComponent(name)}/`
  const memberApi = `${apiBase(pack)}team/${encodeURIComponent(name)}/`
  const isSelf = view.username !== null && view.username.toLowerCase() === name.toLowerCase()
  const target = person.accepted ? person.role : null
  const forms: SafeHtml[] = []
  const offered = view.transfer !== null && view.transfer.toUsername.toLowerCase() === name.toLowerCase()

  if (person.role === 'owner') {
    if (view.transfer) {
      const withdraw = actor !== null && may(actor, 'transfer', pack)
        ? teamForm(view, { action: `${packHref(pack)}transfer/withdraw/`, api: `${apiBase(pack)}transfer/`, method: 'DELETE', label: 'Withdraw the offer of ownership' },
          null, html`<button type="submit" class="secondary">Withdraw offer</button>`)
        : null
      forms.push(html`<p class="hint transfer-note">Ownership offered to <strong>${view.transfer.toUsername}</strong>, until ${timeTag(view.transfer.expiresAt)}.</p>${withdraw}`)
    }
  } else if (actor !== null) {
    if (!isSelf && may(actor, 'manage-member', pack, { role: target })) {
      const choices = MEMBER_ROLES.filter((r) => may(actor, 'manage-member', pack, { role: target, newRole: r }))
      if (choices.some((r) => r !== person.role)) {
        const selectId = `role-${name}`
        forms.push(teamForm(view, { action: `${memberPath}role/`, api: memberApi, method: 'PATCH', label: `Change ${name}'s role`, className: 'role-form' },
          html`<label class="visually-hidden" for="${selectId}">Role of ${name}</label>
<select id="${selectId}" name="role">${choices.map((r) => html`<option value="${r}"${r === person.role ? html` selected` : null}>${r}</option>`)}</select>`,
          html`<button type="submit" class="secondary">Change role</button>`))
      }
      forms.push(person.accepted
        ? teamForm(view, { action: `${memberPath}remove/`, api: memberApi, method: 'DELETE', label: `Remove ${name}`, confirm: `Remove ${name} from the team of ${pack.title}?` },
          null, html`<button type="submit" class="danger">Remove</button>`)
        : teamForm(view, { action: `${memberPath}remove/`, api: memberApi, method: 'DELETE', label: `Withdraw ${name}'s invitation` },
          null, html`<button type="submit" class="secondary">Withdraw invitation</button>`))
    }
    if (person.accepted && !person.disabled && !offered && may(actor, 'transfer', pack)) {
      forms.push(teamForm(view, {
        action: `${packHref(pack)}transfer/`, api: `${apiBase(pack)}transfer/`, method: 'POST', label: `Offer ownership to ${name}`,
        confirm: `Offer ${pack.title} to ${name}? Once they accept, they own it and you stay as a maintainer.`,
      }, html`<input type="hidden" name="username" value="${name}">`, html`<button type="submit" class="secondary">Offer ownership</button>`))
    }
    if (isSelf && person.accepted && may(actor, 'leave', pack)) {
      forms.push(teamForm(view, {
        action: `${memberPath}remove/`, api: memberApi, method: 'DELETE', label: 'Leave the team', confirm: `Leave the team of ${pack.title}?`, done: packHref(pack),
      }, null, html`<button type="submit" class="danger">Leave the team</button>`))
    }
  }
  const expires = !person.accepted && person.expiresAt ? html` <span class="muted">lapses ${timeTag(person.expiresAt)}</span>` : null
  return html`<li class="team-member" data-username="${name}">
<div class="member-who">${who(person)}${expires}${offered ? html` <span class="invited-badge">offered ownership</span>` : null}</div>
${forms.length > 0 ? html`<div class="member-actions">${forms}</div>` : null}
</li>`
}

function inviteForm(view: TeamView): SafeHtml {
  const { pack } = view
  const form = view.state.form ?? {}
  const role = form.role === 'maintainer' ? 'maintainer' : 'uploader'
  return html`<section class="card invite" aria-labelledby="invite-heading">
<h2 id="invite-heading">Invite someone</h2>
<form id="invite-form" class="team-form" method="post" action="${teamHref(pack)}" data-api="${`${apiBase(pack)}team/`}" data-method="POST" novalidate>
<input type="hidden" name="csrf_token" value="${view.csrf}">
<label for="invite-username">Username</label>
<div class="user-picker">
<input type="text" id="invite-username" name="username" value="${form.username ?? ''}" required maxlength="${MAX_USERNAME_LENGTH}" autocomplete="off"
 spellcheck="false" autocapitalize="none" aria-describedby="invite-username-hint">
<ul id="invite-suggestions" class="tag-options user-options" role="listbox" aria-label="Matching users" hidden></ul>
</div>
<span class="hint" id="invite-username-hint">Start typing a name: arrow keys move through the matches, Enter picks one, Escape closes them.</span>
<p id="invite-live" class="visually-hidden" aria-live="polite"></p>
<fieldset class="role-choice"><legend>Role</legend>
<label><input type="radio" name="role" value="uploader"${role === 'uploader' ? html` checked` : null}> Uploader <span class="hint">publishes new versions, edits changelogs</span></label>
<label><input type="radio" name="role" value="maintainer"${role === 'maintainer' ? html` checked` : null}> Maintainer <span class="hint">everything but deleting the pack, handing it over, or managing other maintainers</span></label>
</fieldset>
<p class="field-error" role="alert"></p>
<div class="actions"><button type="submit">Send invitation</button></div>
</form>
</section>`
}
