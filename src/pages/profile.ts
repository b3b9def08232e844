// A user's profile page, /users/{username}/: who they are
// and the packs they publish, as cards like the browse page's, then the packs
// whose team they are in, with their role (hidden ones only to whoever may see
// them, as everywhere). Their own
// hidden packs show to them and to staff, marked "Hidden". A disabled
// account's profile is a 404 except to staff, who see it marked and, on
// anyone's profile but their own, a Disable / Enable form
// (src/web/client/pages/profile.ts posts it to POST /api/users/{username}/disable|enable/).
import { Type } from 'typebox'
import { PACK_ID_HOLD_DAYS, PACKS_PER_PAGE } from '../api/constants.js'
import { BadRequest, NotFound } from '../errors.js'
import type { App } from '../http/types.js'
import { fileUrl } from '../http/urls.js'
import { getProfile, listMemberPacks, type MemberPack, type Profile } from '../profiles/service.js'
import { followedPacks, type FollowedPackRow } from '../packs/follows-service.js'
import { formatCount, timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { browseHref } from '../web/packs.js'
import { sendPage } from '../web/respond.js'
import { alertLine } from '../web/layout.js'
import { packCard, userHref } from './pack-card.js'

/** Nine digits: far past any real page, and never an offset SQLite cannot take. */
const PAGE_PATTERN = /^[0-9]{1,9}$/
/** As the moderation API's ModerationBody allows. */
const MAX_REASON_LENGTH = 500
/** Followed packs listed on the user's own profile: the newest follows (GET /api/me/follows/ pages through all). */
const FOLLOWS_SHOWN = 100

const ProfileParams = Type.Object({ username: Type.String() })
// Text (or a list, when repeated), checked below so a bad value gets a sentence, not a validator's message.
const ProfileQuery = Type.Object({
  page: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  // Set by the delete page (src/pages/delete.ts) after deleting one of this user's packs: a notice says so.
  deleted: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
})

function parsePage(raw: string | string[] | undefined): number {
  if (Array.isArray(raw)) throw new BadRequest('"page" may be given only once')
  const text = (raw ?? '').trim()
  if (text === '') return 1
  const page = PAGE_PATTERN.test(text) ? Number(text) : 0
  if (page < 1) throw new BadRequest(`"page" must be a whole number from 1 to 999999999, not "${text.slice(0, 20)}"`)
  return page
}

export default async function profilePages(app: App): Promise<void> {
  app.get('/users/:username/', {
    config: { access: 'gate', heavy: true },
    schema: { hide: true, params: ProfileParams, querystring: ProfileQuery },
  }, async (request, reply) => {
    const page = parsePage(request.query.page)
    const profile = await getProfile(app.db, request.params.username, request.user, page, PACKS_PER_PAGE)
    const pages = Math.max(1, Math.ceil(profile.total / PACKS_PER_PAGE))
    if (page > pages) throw new NotFound(`there is no page ${page} of ${profile.account.username}'s packs; the last one is page ${pages}`)
    const viewer = request.user
    const isSelf = viewer?.id === profile.account.id
    const view: ProfileView = {
      profile,
      memberOf: await listMemberPacks(app.db, profile.account, viewer),
      // What someone follows is theirs alone: not shown to other viewers, staff included.
      follows: isSelf && viewer ? await followedPacks(app.db, viewer, { limit: FOLLOWS_SHOWN, offset: 0 }) : null,
      pages,
      isSelf,
      // Staff moderate accounts, but not their own (the API refuses that too).
      canModerate: viewer?.isStaff === true && viewer.id !== profile.account.id,
      fileUrl: (id) => fileUrl(app.config, id),
      deleted: deletedNotice(request.query.deleted, profile.account.username),
    }
    return sendPage(app, request, reply, {
      title: page > 1 ? `${profile.account.username}, page ${page}` : profile.account.username,
      body: profileBody(view),
      scripts: view.canModerate ? ['profile'] : [],
    })
  })
}

interface ProfileView {
  profile: Profile
  /** The packs whose team they are in (not as owner), as this viewer may see them. */
  memberOf: MemberPack[]
  /** On their own profile only: the packs they follow (the newest follows) and how many in all; null to anyone else. */
  follows: { items: FollowedPackRow[]; total: number } | null
  pages: number
  isSelf: boolean
  canModerate: boolean
  fileUrl(fileId: string): string
  /** The notice after deleting one of this user's packs (from ?deleted=), or undefined. */
  deleted: string | undefined
}

/** A deleted pack's namespace:pack_id: this user's namespace, slug characters only (so a crafted link cannot put words on the page). */
const DELETED_PATTERN = /^([a-z0-9_.-]{1,32}):([a-z0-9_-]{1,64})$/

function deletedNotice(raw: string | string[] | undefined, username: string): string | undefined {
  const match = typeof raw === 'string' ? DELETED_PATTERN.exec(raw) : null
  if (!match || match[1] !== username.toLowerCase()) return undefined
  return `Pack ${raw} deleted. Its id is held for ${PACK_ID_HOLD_DAYS} days: no new pack can take it until then.`
}

function profileBody(view: ProfileView): SafeHtml {
  const { profile } = view
  const { account } = profile
  const disabled = account.disabledAt !== null
  const count = `${formatCount(profile.total)} ${profile.total === 1 ? 'pack' : 'packs'}`
  return html`<article class="profile">
${alertLine(view.deleted, 'notice')}
<div class="profile-head"><h1>${account.username}</h1>${disabled ? html`<span class="hidden-badge">Disabled</span>` : null}</div>
<p class="profile-meta">Joined ${timeTag(account.createdAt)} · <span class="profile-count">${count}</span></p>
${disabled
    ? html`<p class="card error profile-disabled" role="status"><strong>This account is disabled</strong> (since ${timeTag(account.disabledAt!)}):
it cannot sign in, its API tokens do not work, and its packs are hidden from everyone but staff. Only staff see this page.</p>`
    : null}
<section class="results" aria-labelledby="profile-packs-heading">
<h2 id="profile-packs-heading">${view.isSelf ? 'Your packs' : 'Packs'}</h2>
${profile.includesHidden && !view.isSelf ? html`<p class="hint">Hidden packs are listed too, marked: only their owner and staff see them.</p>` : null}
${profile.packs.length === 0 ? emptyState(view) : html`<ul class="pack-grid">${profile.packs.map((pack) => packCard(pack, {
    fileUrl: view.fileUrl,
    category: (key) => browseHref({ category: key }),
    tag: (name) => browseHref({ tag: name }),
  }))}</ul>`}
${pagination(view)}
</section>
${memberPacks(view)}
${followedList(view)}
${moderationForm(view)}
</article>`
}

function memberPacks(view: ProfileView): SafeHtml | null {
  if (view.memberOf.length === 0) return null
  return html`<section class="member-packs" aria-labelledby="member-packs-heading">
<h2 id="member-packs-heading">${view.isSelf ? 'Teams you are in' : 'Teams'}</h2>
<ul class="member-pack-list">${view.memberOf.map(({ pack, role }) => html`<li class="member-pack">
<a href="${`/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/`}">${pack.title}</a>
<span class="${`role-badge role-${role}`}">${role}</span>${pack.hidden || pack.ownerDisabled ? html` <span class="hidden-badge">Hidden</span>` : null}
<span class="muted">by <a href="${userHref(pack.owner)}">${pack.owner}</a></span>
</li>`)}</ul>
</section>`
}

/** The packs the user follows, on their own profile. */
function followedList(view: ProfileView): SafeHtml | null {
  const follows = view.follows
  if (!follows) return null
  const items = follows.items.map((f) => html`<li class="followed-pack">
<a href="${`/packs/${encodeURIComponent(f.namespace)}/${encodeURIComponent(f.packId)}/`}">${f.title}</a>
<code class="muted">${f.namespace}:${f.packId}</code> <span class="hint">followed ${timeTag(f.followedAt)}</span>
</li>`)
  return html`<section class="followed-packs" aria-labelledby="follows-heading">
<h2 id="follows-heading">Packs you follow <span class="muted count">(${formatCount(follows.total)})</span></h2>
<p class="hint">Only you see this list. New versions of these packs show in your <a href="/notifications/">notifications</a>.</p>
${items.length === 0
    ? html`<p class="empty-follows">You follow no packs yet: a pack's page has a Follow button.</p>`
    : html`<ul class="followed-list">${items}</ul>`}
${follows.total > items.length ? html`<p class="hint">The ${formatCount(items.length)} you followed most recently are shown.</p>` : null}
</section>`
}

function emptyState(view: ProfileView): SafeHtml {
  if (view.isSelf) return html`<div class="empty card"><h2>No packs yet</h2><p><a href="/create/">Create your first pack</a>.</p></div>`
  return html`<div class="empty card"><h2>No packs yet</h2><p>${view.profile.account.username} has not published a pack.</p></div>`
}

function pagination(view: ProfileView): SafeHtml | null {
  if (view.pages === 1) return null
  const { page } = view.profile
  const base = userHref(view.profile.account.username)
  const at = (n: number) => (n === 1 ? base : `${base}?page=${n}`)
  const previous = page > 1
    ? html`<a class="button secondary" rel="prev" href="${at(page - 1)}">Previous</a>`
    : html`<span class="button secondary" aria-disabled="true">Previous</span>`
  const next = page < view.pages
    ? html`<a class="button secondary" rel="next" href="${at(page + 1)}">Next</a>`
    : html`<span class="button secondary" aria-disabled="true">Next</span>`
  return html`<nav class="pagination" aria-label="Pages">${previous}<span class="page-of">Page ${page} of ${view.pages}</span>${next}</nav>`
}

/** Staff: disable or enable the account, with a reason for the audit log. */
function moderationForm(view: ProfileView): SafeHtml | null {
  if (!view.canModerate) return null
  const { account } = view.profile
  const disabled = account.disabledAt !== null
  const action = `/api/users/${encodeURIComponent(account.username)}/${disabled ? 'enable' : 'disable'}/`
  return html`<section class="account-moderation" aria-labelledby="account-moderation-heading"><h2 id="account-moderation-heading">Moderation</h2>
<form id="moderate-account" class="card moderation" method="post" action="${action}" novalidate aria-labelledby="account-moderation-heading">
<p class="hint">${disabled
    ? 'Enabling lets the account sign in again; its API tokens work again and its packs are visible again (packs staff hid one by one stay hidden).'
    : 'Disabling stops the account at once: it cannot sign in, its sessions end, its API tokens stop working and its packs are hidden from everyone but staff. Nothing is deleted; enabling undoes it.'}</p>
<label for="account-reason">Reason (for the audit log)</label>
<input type="text" id="account-reason" name="reason" maxlength="${MAX_REASON_LENGTH}" autocomplete="off">
<p id="account-moderation-error" class="field-error" role="alert"></p>
<div class="actions"><button type="submit" id="account-moderation-submit" class="${disabled ? 'secondary' : 'danger'}">${disabled ? 'Enable account' : 'Disable account'}</button></div>
</form></section>`
}
