// A pack's page: what it is, the id players paste into the in-game mod, its
// description (Markdown, sanitised), media, and every version with a download
// link; its team with their roles. Each control shows exactly when the pack's
// policy (src/packs/policy.ts) lets the viewer use it: the form that uploads a
// new version (src/web/client/pages/pack.ts sends it to the API with a
// progress bar) to the whole team, editing the pack to its owner, maintainers
// and staff. The team's own page, with its forms, is ./team.ts.
import { Type } from 'typebox'
import { MAX_VERSION_NAME_LENGTH, actorOf, findPack, type MediaRef, type PackDetail, type VersionRecord } from '../packs/service.js'
import { may, type PackAction } from '../packs/policy.js'
import { NotFound } from '../errors.js'
import { renderDescription } from '../web/markdown.js'
import { sendPage } from '../web/respond.js'
import type { App } from '../http/types.js'
import { downloadUrl, fileUrl } from '../http/urls.js'
import { html, trusted, type SafeHtml } from '../web/html.js'
import { formatBytes, timeTag } from '../web/format.js'
import { browseHref, chipLink, minecraftTag, thumbnail } from '../web/packs.js'
import { downloadsText, userHref } from './pack-card.js'
import { packHref, teamList, teamHref } from './team.js'
import { followsPack } from '../packs/follows-service.js'
import { formatCount } from '../web/format.js'
import { FOLLOW_BOX_ID } from './follows.js'

const PackPageParams = Type.Object({ namespace: Type.String(), pack_id: Type.String() })

export default async function packPages(app: App): Promise<void> {
  app.get('/packs/:namespace/:pack_id/', {
    config: { access: 'gate', heavy: true },
    schema: { hide: true, params: PackPageParams },
  }, async (request, reply) => {
    // Stored in lower case; the page answers to any case, like the API.
    const namespace = request.params.namespace.toLowerCase()
    const packId = request.params.pack_id.toLowerCase()
    const pack = await findPack(app.db, namespace, packId, request.user)
    if (!pack) throw new NotFound(`there is no pack "${namespace}:${packId}"`)
    const user = request.user
    const actor = user ? actorOf(user, request.tokenReach) : null
    const view: PackView = {
      pack,
      can: (action) => actor !== null && may(actor, action, pack),
      isStaff: user?.isStaff === true,
      fileUrl: (id) => fileUrl(app.config, id),
      downloadUrl: (id) => downloadUrl(app.config, request, id),
      versionLimit: app.config.uploadLimits.version,
      follow: user ? { following: await followsPack(app.db, user, pack), csrfToken: request.csrfToken ?? '' } : null,
    }
    const scripted = (['publish-version', 'edit-changelog', 'manage-versions', 'delete'] as const).some((a) => view.can(a)) || view.isStaff
    return sendPage(app, request, reply, { title: pack.title, body: packBody(view), scripts: scripted ? ['pack'] : [] })
  })
}

interface PackView {
  pack: PackDetail
  /** Whether the viewer may do `action` to this pack (src/packs/policy.ts); false for nobody signed in. */
  can(action: PackAction): boolean
  /** Staff see the hide / unhide control. */
  isStaff: boolean
  fileUrl(fileId: string): string
  downloadUrl(fileId: string): string
  versionLimit: number
  /** The signed-in viewer's follow button (null: nobody signed in): whether they follow the pack now. */
  follow: { following: boolean; csrfToken: string } | null
}

function packBody(view: PackView): SafeHtml {
  const { pack } = view
  const fullId = `${pack.namespace}:${pack.packId}`
  const chips = [
    pack.category ? html`<li>${chipLink(pack.category.name, browseHref({ category: pack.category.key }), pack.category.key, { kind: 'category' })}</li>` : null,
    ...pack.tags.map((t) => html`<li>${chipLink(t.name, browseHref({ tag: t.name }), t.categoryKey)}</li>`),
  ]
  const thumbUrl = pack.thumbnailFileId === null ? null : view.fileUrl(pack.thumbnailFileId)
  return html`<article class="pack-page">
${hiddenNotice(view)}
<header class="pack-header">
${thumbnail(thumbUrl, pack.title, 'pack-icon', `Thumbnail of ${pack.title}`)}
<div class="pack-heading">
<h1>${pack.title}</h1>
${pack.summary ? html`<p class="summary">${pack.summary}</p>` : null}
<p class="byline muted">by <a class="owner" href="${userHref(pack.owner)}">${pack.owner}</a> · published ${timeTag(pack.createdAt)} · updated ${timeTag(pack.updatedAt)} · <span class="downloads">${downloadsText(pack.downloads)}</span></p>
${chips.some((c) => c !== null) ? html`<ul class="chips" aria-label="Category and tags">${chips}</ul>` : null}
${followBox(view)}
${view.can('edit') || view.can('manage-webhooks') ? html`<p class="pack-edit-link">${view.can('edit') ? html`<a class="button secondary" href="${`${packHref(pack)}edit/`}">Edit pack</a> ` : null}${view.can('manage-webhooks')
  ? html`<a class="button secondary" href="${`${packHref(pack)}webhooks/`}">Webhooks</a>` : null}</p>` : null}
</div>
</header>

<section class="card pack-id-box" aria-labelledby="pack-id-heading">
<h2 id="pack-id-heading">Pack id</h2>
<div class="pack-id-row"><code id="pack-id">${fullId}</code><button type="button" class="secondary" data-copy="#pack-id">Copy id</button></div>
<p class="hint">Players paste this id into the in-game mod; it then downloads the newest version on every game start.</p>
</section>

${pack.description.trim() !== ''
    ? html`<section class="pack-description" aria-labelledby="description-heading"><h2 id="description-heading">Description</h2>
<div class="markdown">${trusted(renderDescription(pack.description))}</div></section>`
    : null}

${pack.media.length > 0 ? gallery(pack.media, view) : null}

<section class="pack-team" aria-labelledby="team-heading">
<h2 id="team-heading">Team</h2>
${teamList(pack, view.can('see-pending'))}
${view.can('invite') || view.can('leave') || view.can('transfer')
    ? html`<p><a class="button secondary" href="${teamHref(pack)}">Manage the team</a></p>`
    : html`<p><a href="${teamHref(pack)}">The team page</a></p>`}
</section>

<section class="pack-versions" aria-labelledby="versions-heading">
<h2 id="versions-heading">Versions <span class="muted count">(${pack.versions.length})</span></h2>
${view.can('publish-version') ? newVersionForm(view) : null}
<ol class="versions">${pack.versions.map((v, i) => version(v, i, view))}</ol>
</section>
${view.can('delete') ? html`<p class="pack-danger"><a class="button danger" href="${`/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/delete/`}">Delete pack…</a></p>` : null}
${moderationForm(view)}
</article>`
}

/**
 * How many follow the pack and, to a signed-in viewer, Follow or Unfollow: a form post with the CSRF token
 * (src/pages/follows.ts), which comes back here, to this box.
 */
function followBox(view: PackView): SafeHtml {
  const { pack, follow } = view
  const count = html`<span class="followers" id="followers-count">${formatCount(pack.followers)} ${pack.followers === 1 ? 'follower' : 'followers'}</span>`
  const here = packHref(pack)
  const control = follow
    ? html`<form method="post" action="${`${here}${follow.following ? 'unfollow' : 'follow'}/`}" class="inline-form follow-form">
<input type="hidden" name="csrf_token" value="${follow.csrfToken}">
<button type="submit"${follow.following ? html` class="secondary"` : null} aria-describedby="followers-count">${follow.following ? 'Unfollow' : 'Follow'}</button>
</form>${follow.following ? html`<span class="hint follow-hint">You follow this pack: its new versions show in your <a href="/notifications/">notifications</a>.</span>` : null}`
    : html`<a href="${`/login/?next=${encodeURIComponent(here)}`}">Sign in to follow</a>`
  return html`<div class="follow-box" id="${FOLLOW_BOX_ID}">${count}${control}</div>`
}

function gallery(media: MediaRef[], view: PackView): SafeHtml {
  const items = media.map((m, i) => {
    const url = view.fileUrl(m.fileId)
    const position = `${i + 1} of ${media.length}`
    if (m.contentType.startsWith('video/')) {
      return html`<li class="media-item"><video controls preload="metadata" src="${url}" aria-label="${`Video ${position}: ${m.filename}`}">
<a href="${url}">Download the video ${m.filename}</a></video></li>`
    }
    return html`<li class="media-item"><a href="${url}"><img src="${url}" alt="${`Image ${position}: ${m.filename}`}" loading="lazy"></a></li>`
  })
  return html`<section class="pack-media" aria-labelledby="media-heading"><h2 id="media-heading">Media</h2><ul class="gallery">${items}</ul></section>`
}

function version(v: VersionRecord, index: number, view: PackView): SafeHtml {
  // By position: a name may hold spaces, which an id list (aria-describedby) cannot carry. Not "version-…",
  // which is the version's own id below.
  const headingId = `vh-${index + 1}`
  // Latest: the newest version that is not yanked (what the update-check offers).
  const isLatest = !v.yanked && view.pack.versions.find((other) => !other.yanked) === v
  // The head's id is where a notification or a webhook's message about the version links (…/#version-<name>).
  return html`<li class="${v.yanked ? 'version yanked' : 'version'}">
<div class="version-head" id="${`version-${v.name}`}"><h3 class="version-name" id="${headingId}">${v.name}</h3>${isLatest ? html`<span class="latest-badge">Latest</span>` : null}${v.yanked
    ? html`<span class="yanked-badge" title="Withdrawn: still downloadable here, but the in-game mod no longer offers it">Yanked</span>` : null}</div>
<p class="version-meta">${minecraftTag(v)} · <span>published ${timeTag(v.createdAt, true)}</span> · <span class="downloads">${downloadsText(v.downloads)}</span></p>
${v.changelog.trim() !== '' ? html`<div class="changelog">${v.changelog}</div>` : html`<p class="changelog-empty muted">No changelog.</p>`}
<p class="version-actions"><a class="download button" href="${view.downloadUrl(v.fileId)}" aria-describedby="${headingId}">Download</a></p>
${view.can('edit-changelog') || view.can('manage-versions') ? versionControls(v, headingId, view) : null}
</li>`
}

/**
 * The team (as the policy allows each): edit the changelog; yank or un-yank, delete. Each form's
 * action is the version's API URL; src/web/client/pages/pack.ts sends it with
 * the form's data-method and reloads the page.
 */
function versionControls(v: VersionRecord, headingId: string, view: PackView): SafeHtml {
  const { pack } = view
  const url = `/api/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/versions/${v.id}/`
  return html`<div class="version-manage" aria-label="${`Manage version ${v.name}`}">
${view.can('edit-changelog') ? html`<details class="changelog-edit"><summary>Edit changelog</summary>
<form class="version-form" data-method="PATCH" action="${url}" novalidate>
<label for="${`cl-${v.id}`}">Changelog of ${v.name}</label>
<textarea id="${`cl-${v.id}`}" name="changelog" rows="4">${v.changelog}</textarea>
<div class="actions"><button type="submit">Save changelog</button></div>
<p class="field-error" role="alert"></p>
</form></details>` : null}
${view.can('manage-versions') ? html`<form class="version-form" data-method="PATCH" action="${url}" novalidate>
<input type="hidden" name="yanked" value="${v.yanked ? 'false' : 'true'}">
<button type="submit" class="secondary" aria-describedby="${headingId}">${v.yanked ? 'Un-yank' : 'Yank'}</button>
<p class="field-error" role="alert"></p>
</form>
<form class="version-form" data-method="DELETE" action="${url}" data-confirm="${`Delete version ${v.name} and its file? This cannot be undone.`}" novalidate>
<button type="submit" class="danger" aria-describedby="${headingId}">Delete</button>
<p class="field-error" role="alert"></p>
</form>` : null}
</div>`
}

function newVersionForm(view: PackView): SafeHtml {
  const { pack } = view
  const action = `/api/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/versions/`
  return html`<form id="new-version" class="card new-version" method="post" action="${action}" enctype="multipart/form-data" novalidate aria-labelledby="new-version-heading">
<h3 id="new-version-heading">New version</h3>
<label for="nv-file">Version archive (ZIP)</label>
<input type="file" id="nv-file" name="file" accept=".zip,application/zip" required aria-describedby="nv-file-hint">
<span class="hint" id="nv-file-hint">A .zip file of at most ${formatBytes(view.versionLimit, 'exact')}. Its pack.mcmeta and its assets/ or data/ folder tell which Minecraft releases it is for.</span>
<label for="nv-name">Version name</label>
<input type="text" id="nv-name" name="version_name" required maxlength="${MAX_VERSION_NAME_LENGTH}" autocomplete="off" aria-describedby="nv-name-hint">
<span class="hint" id="nv-name-hint">Unique within this pack, for example 1.2.0.</span>
<label for="nv-changelog">Changelog</label>
<textarea id="nv-changelog" name="changelog" rows="4"></textarea>
<progress id="nv-progress" max="100" value="0" hidden aria-label="Upload progress"></progress>
<p id="nv-status" class="hint" role="status"></p>
<p id="nv-error" class="field-error" role="alert"></p>
<div class="actions"><button type="submit" id="nv-submit">Upload version</button></div>
</form>`
}

/** Why only its owner and staff see this pack (staff hid it, or its owner's account is disabled). */
function hiddenNotice(view: PackView): SafeHtml | null {
  const { pack } = view
  if (!pack.hidden && !pack.ownerDisabled) return null
  const why = pack.hidden && pack.ownerDisabled
    ? 'Staff have hidden this pack, and its owner\'s account is disabled'
    : pack.hidden ? 'Staff have hidden this pack' : 'The owner\'s account is disabled'
  return html`<p class="card error hidden-notice" role="status"><strong>${why}:</strong> only its team and staff can see it;
it is left out of the listing and the update-check answers "not found" for it.</p>`
}

/** Staff: hide or unhide the pack, with a reason for the audit log (src/web/client/pages/pack.ts posts it). */
function moderationForm(view: PackView): SafeHtml | null {
  if (!view.isStaff) return null
  const { pack } = view
  const verb = pack.hidden ? 'unhide' : 'hide'
  const action = `/api/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/${verb}/`
  return html`<section class="pack-moderation" aria-labelledby="moderation-heading"><h2 id="moderation-heading">Moderation</h2>
<form id="moderate-pack" class="card moderation" method="post" action="${action}" novalidate aria-labelledby="moderation-heading">
<p class="hint">${pack.hidden
    ? 'Unhiding shows the pack to everyone again and the update-check offers its newest version again.'
    : 'Hiding takes the pack down for everyone but its owner and staff; the update-check answers "not found". Nothing is deleted.'}</p>
<label for="moderation-reason">Reason (for the audit log)</label>
<input type="text" id="moderation-reason" name="reason" maxlength="500" autocomplete="off">
<p id="moderation-error" class="field-error" role="alert"></p>
<div class="actions"><button type="submit" id="moderation-submit" class="${pack.hidden ? 'secondary' : 'danger'}">${pack.hidden ? 'Unhide pack' : 'Hide pack'}</button></div>
</form></section>`
}
