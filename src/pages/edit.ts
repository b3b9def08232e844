// The edit page of a published pack: title, summary,
// category, tags, description, thumbnail and gallery. Owner and staff; anyone
// else gets the 404 page, as for a missing pack. The server renders the pack's
// current state; src/web/client/pages/edit.ts tracks unsaved changes, uploads
// with progress, reorders the gallery and saves with PATCH on the API when the
// Save button is pressed (never on its own).
//
// Without JavaScript the form still works for what plain HTML can carry: it
// posts title, summary, category and description here, with the revision the
// page was rendered at, so a conflicting edit is refused the same way.
import { Type } from 'typebox'
import { MAX_SUMMARY_LENGTH } from '../api/packs.js'
import { DomainError, Conflict } from '../errors.js'
import type { App } from '../http/types.js'
import { fileUrl } from '../http/urls.js'
import { editPack } from '../packs/edit-service.js'
import { MAX_TITLE_LENGTH, actorOf, packFor, type MediaRef, type PackDetail } from '../packs/service.js'
import { listCategories, type CategoryRow } from '../packs/tags.js'
import { describeAllowed } from '../uploads/filetypes.js'
import { formatBytes } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { packHref } from '../web/packs.js'
import { sendPage } from '../web/respond.js'

const Params = Type.Object({ namespace: Type.String(), pack_id: Type.String() })
/** What the form posts without JavaScript; the service checks each field as for the API. */
const EditForm = Type.Object({
  revision: Type.Optional(Type.String()),
  title: Type.Optional(Type.String()),
  summary: Type.Optional(Type.String()),
  category: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  csrf_token: Type.Optional(Type.String()),
})

/** The form's values: the pack's, or what a refused post sent (so nothing typed is lost). */
interface FormValues {
  revision: number
  title: string
  summary: string
  category: string
  description: string
}

export default async function editPages(app: App): Promise<void> {
  app.get('/packs/:namespace/:pack_id/edit/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params },
  }, async (request, reply) => {
    const pack = await packFor(app.db, request.params.namespace, request.params.pack_id, actorOf(request.user!), 'edit')
    const body = editBody(app, pack, valuesOf(pack), await listCategories(app.db), request.csrfToken ?? '')
    return sendPage(app, request, reply, { title: `Edit ${pack.title}`, body, scripts: ['edit'] })
  })

  app.post('/packs/:namespace/:pack_id/edit/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params, body: EditForm },
  }, async (request, reply) => {
    const pack = await packFor(app.db, request.params.namespace, request.params.pack_id, actorOf(request.user!), 'edit')
    const form = request.body
    // A revision that is no number is no revision the pack has been at: the service answers it as a conflict.
    const revision = /^[0-9]{1,10}$/.test(form.revision ?? '') ? Number(form.revision) : 0
    const sent: FormValues = {
      revision,
      title: form.title ?? pack.title,
      summary: form.summary ?? pack.summary,
      category: form.category ?? pack.category?.key ?? '',
      description: form.description ?? pack.description,
    }
    try {
      await editPack(app, request.user!, pack.namespace, pack.packId, {
        revision: revision > 0 && revision <= 2_147_483_647 ? revision : -1,
        title: sent.title,
        summary: sent.summary,
        category: sent.category,
        // Browsers send textarea text with CRLF line ends; the API (and the script) keep LF.
        description: sent.description.replace(/\r\n/g, '\n'),
      }, request.log)
    } catch (error) {
      if (!(error instanceof DomainError) || error.status === 404) throw error
      const message = error instanceof Conflict
        ? 'This pack was changed elsewhere (in another tab, or by someone else) since this page was opened, so nothing was saved. '
          + 'Reload the page to edit the current version; copy anything you typed here first.'
        : `Not saved: ${error.detail.charAt(0).toUpperCase()}${error.detail.slice(1)}.`
      const body = editBody(app, pack, sent, await listCategories(app.db), request.csrfToken ?? '', { message, conflict: error instanceof Conflict })
      return sendPage(app, request, reply, { title: `Edit ${pack.title}`, body, scripts: ['edit'] }, error.status)
    }
    return reply.redirect(packHref(pack.namespace, pack.packId), 303)
  })
}

function valuesOf(pack: PackDetail): FormValues {
  return { revision: pack.revision, title: pack.title, summary: pack.summary, category: pack.category?.key ?? '', description: pack.description }
}

interface Failure {
  message: string
  conflict: boolean
}

function editBody(app: App, pack: PackDetail, values: FormValues, categories: CategoryRow[], csrf: string, failure?: Failure): SafeHtml {
  const packUrl = packHref(pack.namespace, pack.packId)
  const api = `/api/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/`
  const limits = app.config.uploadLimits
  const knownCategory = values.category === '' || categories.some((c) => c.key === values.category)
  const thumbUrl = pack.thumbnailFileId === null ? null : fileUrl(app.config, pack.thumbnailFileId)
  return html`<div class="create-page edit-page">
<div class="create-head">
<h1>Edit <span id="edit-title-heading">${pack.title}</span></h1>
<p id="edit-state" class="save-state" role="status" aria-live="polite" data-state="clean">No unsaved changes</p>
</div>
<p class="muted create-intro">The pack id <code>${pack.namespace}:${pack.packId}</code> stays as it is, whatever the title:
it is what players' mods ask for. Changes are saved only when you press <strong>Save changes</strong>.
<a href="${packUrl}">Back to the pack</a></p>
<noscript><p class="error">Without JavaScript, this page saves the title, summary, category and description only; changing the tags,
the thumbnail or the gallery needs JavaScript.</p></noscript>
<div id="edit-conflict" class="card error edit-conflict" role="alert"${failure?.conflict ? null : html` hidden`}>
<p id="edit-conflict-text">${failure?.conflict ? failure.message : ''}</p>
<p><a class="button" id="edit-reload" href="">Reload the page</a></p>
</div>
<form id="edit-form" class="create-form edit-form" method="post" action="" novalidate
 data-api="${api}" data-pack-url="${packUrl}" data-revision="${values.revision}">
<input type="hidden" name="csrf_token" value="${csrf}">
<input type="hidden" name="revision" id="revision" value="${values.revision}">
<section class="card" aria-labelledby="about-heading">
<h2 id="about-heading">About the pack</h2>
${field('title', 'Title', html`<input id="title" name="title" type="text" maxlength="${MAX_TITLE_LENGTH}" required autocomplete="off" value="${values.title}" aria-describedby="title-hint title-error">`,
    'Shown on the pack page, in lists and in players\' mods. The pack id does not change with it.')}
${field('summary', 'Summary', html`<input id="summary" name="summary" type="text" maxlength="${MAX_SUMMARY_LENGTH}" autocomplete="off" value="${values.summary}" aria-describedby="summary-hint summary-error">`,
    'One line shown in lists.')}
${field('category', 'Category', html`<select id="category" name="category" aria-describedby="category-error">
<option value=""${values.category === '' ? html` selected` : null}>No category</option>
${categories.map((c) => html`<option value="${c.key}"${c.key === values.category ? html` selected` : null}>${c.name}</option>`)}
${knownCategory ? null : html`<option value="${values.category}" selected>${values.category} (no longer offered)</option>`}
</select>`)}
${tagsField(pack)}
${field('description', 'Description', html`<textarea id="description" name="description" rows="12" aria-describedby="description-hint description-error">${values.description}</textarea>`,
    'Markdown: **bold**, *italic*, [links](address), lists, headings and `code`.')}
</section>

<section class="card" aria-labelledby="images-heading">
<h2 id="images-heading">Images and video</h2>
<div class="field upload-field" id="field-thumbnail">
<span class="label" id="thumbnail-label">Thumbnail</span>
<div class="thumbnail-current" id="thumbnail-current" data-url="${thumbUrl ?? ''}">
${thumbUrl === null
    ? html`<p class="muted" id="thumbnail-none">No thumbnail.</p>`
    : html`<img class="upload-preview" id="thumbnail-preview" src="${thumbUrl}" alt="${`Current thumbnail of ${pack.title}`}">`}
</div>
<div class="edit-buttons">
<button type="button" class="secondary" id="thumbnail-remove"${thumbUrl === null ? html` hidden` : null}>Remove thumbnail</button>
<button type="button" class="secondary" id="thumbnail-undo" hidden>Keep the current thumbnail</button>
</div>
<label for="file-thumbnail">Upload a new thumbnail</label>
<input id="file-thumbnail" type="file" accept="image/png,image/jpeg,image/gif,image/webp" aria-describedby="file-thumbnail-hint thumbnail-error">
<span class="hint" id="file-thumbnail-hint">${describeAllowed('thumbnail')}, at most ${formatBytes(limits.thumbnail, 'exact')}. It replaces the current one when you save.</span>
<p class="field-error" id="thumbnail-error" role="alert" hidden></p>
<ul class="upload-list" id="thumbnail-uploads"></ul>
</div>

<div class="field upload-field" id="field-media">
<span class="label" id="media-label">Gallery</span>
<p class="muted" id="gallery-empty"${pack.media.length > 0 ? html` hidden` : null}>The gallery is empty.</p>
<ol class="upload-list gallery-list" id="gallery-list" aria-labelledby="media-label">${pack.media.map((m) => galleryItem(app, m))}</ol>
<label for="file-media">Add images or videos</label>
<input id="file-media" type="file" multiple accept="image/png,image/jpeg,image/gif,image/webp,video/mp4,video/webm" aria-describedby="file-media-hint media-error">
<span class="hint" id="file-media-hint">Screenshots and videos: ${describeAllowed('media')}, at most ${formatBytes(limits.media, 'exact')} each. You can choose several files.
Move items up and down to change the order; removed items and their files are deleted when you save.</span>
<p class="field-error" id="media-error" role="alert" hidden></p>
<span id="gallery-live" class="visually-hidden" role="status"></span>
</div>
</section>

<div class="actions publish-actions">
<button type="submit" id="save" name="save" value="1">Save changes</button>
<a class="button secondary" href="${packUrl}" id="cancel">Back to the pack</a>
<p id="save-status" class="publish-status" role="status" aria-live="polite"></p>
</div>
<p id="save-error" class="field-error" role="alert"${failure && !failure.conflict ? null : html` hidden`}>${failure && !failure.conflict ? failure.message : ''}</p>
</form>
</div>`
}

/** A labelled field with an optional hint and the (hidden until needed) error line. */
function field(id: string, label: string, control: SafeHtml, hint?: string): SafeHtml {
  return html`<div class="field" id="field-${id}">
<label for="${id}">${label}</label>
${control}
${hint ? html`<span class="hint" id="${id}-hint">${hint}</span>` : null}
<p class="field-error" id="${id}-error" role="alert" hidden></p>
</div>`
}

/** The tags field: the same markup as the create page's, which src/web/client/lib/tag-picker.ts drives. */
function tagsField(pack: PackDetail): SafeHtml {
  return html`<div class="field tags-field" id="field-tags">
<label for="tags">Tags</label>
<ul class="chips tag-chips" id="tag-chips">${pack.tags.map((t) => html`<li data-tag="${t.name}" data-category="${t.categoryKey}"><span class="chip${/^[a-z0-9_-]+$/.test(t.categoryKey) ? ` cat-${t.categoryKey}` : ''}">${t.name}<button type="button" class="chip-remove" aria-label="Remove ${t.name}">×</button></span></li>`)}</ul>
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

/** One gallery item with its controls; the client builds the same markup for new uploads (src/web/client/pages/edit.ts). */
function galleryItem(app: App, media: MediaRef): SafeHtml {
  const url = fileUrl(app.config, media.fileId)
  const preview = media.contentType.startsWith('video/')
    ? html`<video class="upload-preview" src="${url}" controls muted preload="metadata" aria-label="Preview of ${media.filename}"></video>`
    : html`<img class="upload-preview" src="${url}" alt="Preview of ${media.filename}">`
  return html`<li class="upload gallery-item" data-media="${media.fileId}">
${preview}
<span class="upload-name">${media.filename}</span>
<span class="edit-buttons">
<button type="button" class="secondary move-up">Move up<span class="visually-hidden"> ${media.filename}</span></button>
<button type="button" class="secondary move-down">Move down<span class="visually-hidden"> ${media.filename}</span></button>
<button type="button" class="danger remove-media">Remove<span class="visually-hidden"> ${media.filename}</span></button>
</span>
</li>`
}
