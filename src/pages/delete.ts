// Deleting a pack from the site: a page that says what
// goes and that the id is held, and asks for the pack id to be typed before
// the button works. Without JavaScript the form posts here and the server
// checks the typed id itself; with it, src/web/client/pages/pack.ts sends the
// API's DELETE. Owner and staff; anyone else gets the 404 page.
import { Type } from 'typebox'
import { PACK_ID_HOLD_DAYS } from '../api/constants.js'
import { BadRequest } from '../errors.js'
import type { App } from '../http/types.js'
import { deletePack } from '../packs/delete-service.js'
import { actorOf, packFor, type PackDetail } from '../packs/service.js'
import { html, type SafeHtml } from '../web/html.js'
import { sendPage } from '../web/respond.js'
import { userHref } from './pack-card.js'

const Params = Type.Object({ namespace: Type.String(), pack_id: Type.String() })
const DeleteForm = Type.Object({ confirm: Type.Optional(Type.String()), csrf_token: Type.Optional(Type.String()) })

export default async function deletePages(app: App): Promise<void> {
  app.get('/packs/:namespace/:pack_id/delete/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params },
  }, async (request, reply) => {
    const pack = await packFor(app.db, request.params.namespace, request.params.pack_id, actorOf(request.user!), 'delete')
    return sendPage(app, request, reply, { title: `Delete ${pack.title}`, body: deleteBody(pack, request.csrfToken ?? ''), scripts: ['pack'] })
  })

  app.post('/packs/:namespace/:pack_id/delete/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params, body: DeleteForm },
  }, async (request, reply) => {
    const pack = await packFor(app.db, request.params.namespace, request.params.pack_id, actorOf(request.user!), 'delete')
    if ((request.body.confirm ?? '').trim().toLowerCase() !== pack.packId) {
      const error = new BadRequest(`type the pack id "${pack.packId}" to confirm`)
      return sendPage(app, request, reply, { title: `Delete ${pack.title}`, body: deleteBody(pack, request.csrfToken ?? '', error.message), scripts: ['pack'] }, 400)
    }
    await deletePack(app, request.user!, pack.namespace, pack.packId)
    return reply.redirect(doneHref(pack), 303)
  })
}

/** Where a deletion lands: the owner's profile, which then says the pack was deleted and its id is held. */
function doneHref(pack: PackDetail): string {
  return `${userHref(pack.owner)}?deleted=${encodeURIComponent(`${pack.namespace}:${pack.packId}`)}`
}

function deleteBody(pack: PackDetail, csrf: string, error?: string): SafeHtml {
  const api = `/api/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/`
  const files = pack.versions.length + pack.media.length + (pack.thumbnailFileId ? 1 : 0)
  return html`<article class="card delete-pack">
<h1>Delete ${pack.title}</h1>
<p>This deletes the pack <code>${pack.namespace}:${pack.packId}</code> for good: its ${pack.versions.length} version(s), its gallery,
its thumbnail and their ${files} stored file(s). It cannot be undone.</p>
<p>Players whose in-game mod follows this pack will be told it no longer exists. The id
<code>${pack.namespace}:${pack.packId}</code> is held for ${PACK_ID_HOLD_DAYS} days: no pack, yours included, can take it
until then, so no player silently receives a different pack under a name they trust.</p>
<form id="delete-pack" method="post" action="" data-api="${api}" data-pack-id="${pack.packId}" data-done="${doneHref(pack)}" novalidate>
<input type="hidden" name="csrf_token" value="${csrf}">
<label for="delete-confirm">Type the pack id <code>${pack.packId}</code> to confirm</label>
<input type="text" id="delete-confirm" name="confirm" autocomplete="off" spellcheck="false" required aria-describedby="delete-error">
<p id="delete-error" class="field-error" role="alert">${error ?? ''}</p>
<div class="actions"><button type="submit" id="delete-submit" class="danger">Delete this pack</button>
<a class="button secondary" href="${`/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/`}">Cancel</a></div>
</form>
</article>`
}
