// The create page (a draft of a new pack, autosaved) and "My drafts".
// The server renders the form with the draft's saved values and uploads, so a
// reload shows them at once; src/web/client/pages/create.ts adds autosave,
// uploads, tag autocomplete, the co-authors to invite and publishing on the JSON API.
import { randomUUID } from 'node:crypto'
import { Type } from 'typebox'
import type { UploadKind } from '../api/constants.js'
import { draftForEditing, listDrafts, type DraftSummary } from '../drafts/service.js'
import { MAX_DRAFT_TEAM, type DraftFields } from '../drafts/data.js'
import { chipTags, listCategories, type CategoryRow, type ChipTag } from '../packs/tags.js'
import { NotFound } from '../errors.js'
import { describeAllowed } from '../uploads/filetypes.js'
import { formatBytes } from '../web/format.js'
import { MAX_TITLE_LENGTH, MAX_VERSION_NAME_LENGTH } from '../packs/service.js'
import { sendPage } from '../web/respond.js'
import type { App } from '../http/types.js'
import { isUuid } from '../api/constants.js'
import type { TempUploadBody } from '../api/uploads.js'
import { toTempUpload } from '../uploads/mapper.js'
import { html, type SafeHtml } from '../web/html.js'

const DraftParams = Type.Object({ draft: Type.String() })

/** What the form shows: the draft's saved members, each as text (anything else in the saved data is ignored). */
type FormValues = DraftFields

export default async function createPages(app: App): Promise<void> {
  app.get('/create/', { config: { access: 'user' }, schema: { hide: true } }, async (_request, reply) => {
    // A fresh draft id: the draft row itself is made by the first autosave or upload.
    return reply.redirect(`/create/${randomUUID()}/`, 303)
  })

  app.get('/create/:draft/', { config: { access: 'user' }, schema: { hide: true, params: DraftParams } }, async (request, reply) => {
    const raw = request.params.draft
    if (!isUuid(raw)) throw new NotFound('not found')
    const draftId = raw.toLowerCase()
    const draft = await draftForEditing(app.db, request.user!.id, draftId)
    // Someone else's draft looks like any missing page: nothing about it is shown.
    if (!draft) throw new NotFound('not found')
    const values = draft.fields
    const uploads = draft.uploads.map((u) => toTempUpload(app.config, u))
    const categories = await listCategories(app.db)
    const tags = await chipTags(app.db, values.tags)
    const body = createForm({
      draftId, values, tags, categories, uploads, savedAt: draft.savedAt, limits: app.config.uploadLimits, author: request.user!.username,
    })
    return sendPage(app, request, reply, { title: values.title.trim() || 'Create a pack', body, scripts: ['create'] })
  })

  app.get('/drafts/', { config: { access: 'user' }, schema: { hide: true } }, async (request, reply) => {
    const drafts = await listDrafts(app.db, request.user!.id)
    return sendPage(app, request, reply, { title: 'My drafts', body: draftsList(drafts), scripts: ['drafts'] })
  })
}

interface CreateFormInput {
  draftId: string
  values: FormValues
  tags: ChipTag[]
  categories: CategoryRow[]
  uploads: TempUploadBody[]
  savedAt: string | null
  limits: Record<UploadKind, number>
  /** The signed-in author's username: the team field does not offer them (they own what they publish). */
  author: string
}

function createForm(input: CreateFormInput): SafeHtml {
  const { draftId, values, categories } = input
  const knownCategory = values.category === '' || categories.some((c) => c.key === values.category)
  return html`<div class="create-page">
<div class="create-head">
<h1>Create a pack</h1>
<p id="save-state" class="save-state" role="status" aria-live="polite"${input.savedAt ? html` data-saved-at="${input.savedAt}"` : null}>${input.savedAt ? 'Saved' : 'New draft'}</p>
</div>
<p class="muted create-intro">Everything you type is saved as a draft on its own; this page's address brings you back to it.
Find all your drafts under <a href="/drafts/">My drafts</a>.</p>
<noscript><p class="error">This page needs JavaScript to save your draft, upload files and publish.</p></noscript>
<form id="create-form" class="create-form" data-draft="${draftId}" data-revision="${values.revision}" novalidate>
<section class="card" aria-labelledby="about-heading">
<h2 id="about-heading">About the pack</h2>
${field('title', 'Title', html`<input id="title" name="title" type="text" maxlength="${MAX_TITLE_LENGTH}" autocomplete="off" value="${values.title}" aria-describedby="title-hint title-error">`,
    'The pack id is made from the title: lower-case letters, digits, "-" and "_".')}
${field('summary', 'Summary', html`<input id="summary" name="summary" type="text" maxlength="300" autocomplete="off" value="${values.summary}" aria-describedby="summary-hint summary-error">`,
    'One line shown in lists.')}
${field('category', 'Category', html`<select id="category" name="category" aria-describedby="category-error">
<option value=""${values.category === '' ? html` selected` : null}>No category</option>
${categories.map((c) => html`<option value="${c.key}"${c.key === values.category ? html` selected` : null}>${c.name}</option>`)}
${knownCategory ? null : html`<option value="${values.category}" selected>${values.category} (no longer offered)</option>`}
</select>`)}
${tagsField(input.tags)}
${field('description', 'Description', html`<textarea id="description" name="description" rows="10" aria-describedby="description-hint description-error">${values.description}</textarea>`,
    'Markdown: **bold**, *italic*, [links](address), lists, headings and `code`.')}
</section>

<section class="card" aria-labelledby="images-heading">
<h2 id="images-heading">Images and video</h2>
${uploadField('thumbnail', 'Thumbnail', input, `${describeAllowed('thumbnail')}, at most ${formatBytes(input.limits.thumbnail, 'exact')}. Uploading a new thumbnail replaces the current one.`,
    'image/png,image/jpeg,image/gif,image/webp', false)}
${uploadField('media', 'Media', input, `Screenshots and videos: ${describeAllowed('media')}, at most ${formatBytes(input.limits.media, 'exact')} each. You can choose several files.`,
    'image/png,image/jpeg,image/gif,image/webp,video/mp4,video/webm', true)}
</section>

<section class="card" aria-labelledby="version-heading">
<h2 id="version-heading">First version</h2>
${field('version_name', 'Version name', html`<input id="version_name" name="version_name" type="text" maxlength="${MAX_VERSION_NAME_LENGTH}" autocomplete="off" value="${values.version_name}" aria-describedby="version_name-hint version_name-error">`,
    'For example 1.0.0.')}
${uploadField('version', 'Version archive (ZIP)', input, `The pack as a ZIP archive with pack.mcmeta at its root, at most ${formatBytes(input.limits.version, 'exact')}. Uploading a new archive replaces the current one.`,
    '.zip,application/zip', false)}
${field('changelog', 'Changelog', html`<textarea id="changelog" name="changelog" rows="5" aria-describedby="changelog-hint changelog-error">${values.changelog}</textarea>`,
    'What is new in this version.')}
</section>

${teamSection(input.author, values.team)}

<div class="actions publish-actions">
<button type="button" id="publish">Publish</button>
<p id="publish-status" class="publish-status" role="status" aria-live="polite"></p>
</div>
<p id="publish-error" class="field-error" role="alert" hidden></p>
</form>
</div>`
}

/** A labelled field with an optional hint and the (hidden until needed) error line the publish step fills. */
function field(id: string, label: string, control: SafeHtml, hint?: string): SafeHtml {
  return html`<div class="field" id="field-${id}">
<label for="${id}">${label}</label>
${control}
${hint ? html`<span class="hint" id="${id}-hint">${hint}</span>` : null}
<p class="field-error" id="${id}-error" role="alert" hidden></p>
</div>`
}

function tagsField(tags: ChipTag[]): SafeHtml {
  return html`<div class="field tags-field" id="field-tags">
<label for="tags">Tags</label>
<ul class="chips tag-chips" id="tag-chips">${tags.map(tagChip)}</ul>
<div class="combo">
<input id="tags" type="text" role="combobox" aria-autocomplete="list" aria-expanded="false" aria-controls="tag-options" autocomplete="off"
 placeholder="Search tags" aria-describedby="tags-hint tags-error">
<ul id="tag-options" class="tag-options" role="listbox" aria-label="Tag suggestions" hidden></ul>
</div>
<span class="hint" id="tags-hint">Type to search; choose with the arrow keys and Enter. Backspace in the empty box removes the last tag.</span>
<p class="field-error" id="tags-error" role="alert" hidden></p>
<span id="tags-live" class="visually-hidden" role="status"></span>
</div>`
}

/** As long as a username can be (the team page's invite form allows the same). */
const MAX_USERNAME_LENGTH = 64

/**
 * Co-authors to invite when the pack is published (the draft's data.team): a
 * user picker (src/web/client/lib/user-picker.ts, which makes the box a
 * combobox over the listbox) and the chosen people, each with a role and a
 * Remove button. Without JavaScript nothing on this page saves, as the
 * noscript line says; the box is then a plain text box and nothing submits.
 */
function teamSection(author: string, team: DraftFields['team']): SafeHtml {
  return html`<section class="card" aria-labelledby="team-heading">
<h2 id="team-heading">Team</h2>
<p class="muted" id="team-about">Invite people to work on the pack with you. The invitations go out when the pack is published, and each
person joins the team only once they accept theirs (under Invitations); until then the pack is yours alone.</p>
<div class="field team-field" id="field-team" data-author="${author}" data-max="${MAX_DRAFT_TEAM}">
<label for="team">Add a co-author</label>
<div class="combo user-picker">
<input id="team" type="text" maxlength="${MAX_USERNAME_LENGTH}" autocomplete="off" spellcheck="false" autocapitalize="none"
 placeholder="Search users" aria-describedby="team-hint team-error">
<ul id="team-options" class="tag-options user-options" role="listbox" aria-label="Matching users" hidden></ul>
</div>
<span class="hint" id="team-hint">Type part of a username: arrow keys move through the matches, Enter adds one. Uploaders publish new
versions and edit changelogs; maintainers also edit the pack, its versions and its team, but cannot delete it or hand it over. At most ${MAX_DRAFT_TEAM} people.</span>
<p class="field-error" id="team-error" role="alert" hidden></p>
<span id="team-live" class="visually-hidden" role="status"></span>
<ul class="team-people" id="team-people" aria-label="Co-authors to invite">${team.map(teamPerson)}</ul>
</div>
</section>`
}

/** A co-author to invite. The client builds the same markup for people added later (create-markup.ts). */
function teamPerson(person: DraftFields['team'][number]): SafeHtml {
  const option = (value: 'uploader' | 'maintainer', label: string) =>
    html`<option value="${value}"${person.role === value ? html` selected` : null}>${label}</option>`
  return html`<li class="team-person" data-username="${person.username}"><span class="member-name">${person.username}</span>
<label class="team-role"><span class="visually-hidden">Role of ${person.username}</span><select>${option('uploader', 'Uploader')}${option('maintainer', 'Maintainer')}</select></label>
<button type="button" class="secondary team-remove">Remove<span class="visually-hidden"> ${person.username}</span></button></li>`
}

/** A selected tag. The client builds the same markup for tags picked later (src/web/client/lib/create-markup.ts). */
function tagChip(tag: ChipTag): SafeHtml {
  return html`<li data-tag="${tag.name}"><span class="chip${tag.category ? ` cat-${tag.category}` : ''}">${tag.name}<button type="button" class="chip-remove" aria-label="Remove ${tag.name}">×</button></span></li>`
}

function uploadField(kind: UploadKind, label: string, input: CreateFormInput, hint: string, accept: string, multiple: boolean): SafeHtml {
  const id = `file-${kind}`
  const uploads = input.uploads.filter((u) => u.kind === kind)
  return html`<div class="field upload-field" id="field-${kind}" data-kind="${kind}">
<label for="${id}">${label}</label>
<input id="${id}" name="${kind}" type="file" accept="${accept}"${multiple ? html` multiple` : null} aria-describedby="${id}-hint ${kind}-error">
<span class="hint" id="${id}-hint">${hint}</span>
<p class="field-error" id="${kind}-error" role="alert" hidden></p>
<ul class="upload-list" id="${kind}-uploads">${uploads.map(uploadItem)}</ul>
</div>`
}

/** A finished upload with its preview and Delete button. The client builds the same markup (create-markup.ts). */
function uploadItem(upload: TempUploadBody): SafeHtml {
  return html`<li class="upload" data-upload="${upload.uuid}" data-kind="${upload.kind}">
${preview(upload)}
<span class="upload-name">${upload.filename}</span>
<button type="button" class="danger delete-upload">Delete<span class="visually-hidden"> ${upload.filename}</span></button>
</li>`
}

function preview(upload: TempUploadBody): SafeHtml {
  if (upload.content_type.startsWith('image/')) {
    return html`<img class="upload-preview" src="${upload.url}" alt="Preview of ${upload.filename}">`
  }
  if (upload.content_type.startsWith('video/')) {
    return html`<video class="upload-preview" src="${upload.url}" controls muted preload="metadata" aria-label="Preview of ${upload.filename}"></video>`
  }
  return html`<span class="upload-preview file-badge" aria-hidden="true">ZIP</span>`
}

const SAVED_AT = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: 'UTC',
})

function draftsList(drafts: DraftSummary[]): SafeHtml {
  return html`<div class="drafts-page">
<h1>My drafts</h1>
<p class="muted">Drafts are saved as you type on the create page. Drafts untouched for a long time are removed with their files.</p>
<div class="actions"><a class="button" href="/create/">Create a new pack</a></div>
<p id="drafts-status" class="drafts-status" role="status" aria-live="polite"></p>
<p id="drafts-empty" class="muted"${drafts.length > 0 ? html` hidden` : null}>You have no drafts.</p>
<ul class="draft-list" id="draft-list">
${drafts.map((d) => html`<li class="draft card" data-draft="${d.id}">
<div class="draft-main">
<h2 class="draft-title">${d.title === null ? html`<span class="muted">Untitled draft</span>` : d.title}</h2>
<p class="draft-meta muted">Saved <time datetime="${d.updatedAt}">${savedAtText(d.updatedAt)}</time> · ${d.uploads === 1 ? '1 upload' : `${d.uploads} uploads`}</p>
</div>
<div class="draft-actions">
<a class="button secondary" href="/create/${d.id}/">Resume<span class="visually-hidden"> ${d.title ?? 'untitled draft'}</span></a>
<button type="button" class="danger delete-draft">Delete<span class="visually-hidden"> ${d.title ?? 'untitled draft'}</span></button>
</div>
</li>`)}
</ul>
</div>`
}

function savedAtText(iso: string): string {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : `${SAVED_AT.format(date)} UTC`
}
