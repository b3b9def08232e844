// A pack's webhooks in its settings (docs/notifications.md#webhooks): /packs/{ns}/{id}/webhooks/ lists them
// with a form to add one (the signing secret is shown on the page that answers the form, once), and each
// webhook's page changes it, switches it off or on, removes it, sends a test event and shows its delivery
// log (the last 50 tries) with "Deliver again" on each finished delivery. Every form posts here and works
// without JavaScript; the use cases are src/webhooks/service.ts's, so the pages refuse what the API refuses.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { BadRequest, DomainError, NotFound } from '../errors.js'
import type { App } from '../http/types.js'
import { WEBHOOK_EVENTS, WEBHOOK_FORMATS, WEBHOOK_LOG_SIZE, WEBHOOK_URL_MAX, type WebhookEvent, type WebhookFormat } from '../api/webhooks.js'
import { publicOrigin } from '../http/urls.js'
import type { PackChanger, PackDetail } from '../packs/service.js'
import { toWebhook, toWebhookLog } from '../webhooks/mapper.js'
import { webhookDeps } from '../webhooks/routes.js'
import {
  addWebhook, changeWebhook, redeliver, removeWebhook, sendTestEvent, webhookLog, webhookOf, webhooksOf,
} from '../webhooks/service.js'
import { timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'
import { sendPage } from '../web/respond.js'
import { packHref, sentence } from './team.js'

const Params = Type.Object({ namespace: Type.String(), pack_id: Type.String() })
const WebhookParams = Type.Object({ namespace: Type.String(), pack_id: Type.String(), webhook_id: Type.String({ maxLength: 64 }) })
const DeliveryParams = Type.Object({
  namespace: Type.String(), pack_id: Type.String(), webhook_id: Type.String({ maxLength: 64 }), delivery_id: Type.String({ maxLength: 64 }),
})
const WebhookForm = Type.Object({
  url: Type.Optional(Type.String()),
  format: Type.Optional(Type.String()),
  // One checkbox ticked arrives as a string; the validator makes it a one-item array.
  events: Type.Optional(Type.Array(Type.String())),
  active: Type.Optional(Type.String()),
  csrf_token: Type.Optional(Type.String()),
})
const CsrfOnly = Type.Object({ csrf_token: Type.Optional(Type.String()) })
const PageQuery = Type.Object({ done: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])) })

/** What a successful form post says on the page it lands on (?done=…): fixed sentences, so a link cannot put words on the page. */
const DONE: Record<string, string> = {
  saved: 'Webhook saved.',
  removed: 'Webhook removed.',
  test: 'Test event queued: its try shows in the log below within a few seconds (reload the page).',
  again: 'Delivery queued again: its try shows in the log below within a few seconds (reload the page).',
}

const EVENT_LABELS: Record<WebhookEvent, string> = {
  'version.published': 'A version is published',
  'version.yanked': 'A version is yanked',
  'version.deleted': 'A version is deleted',
  'pack.edited': 'The pack page is edited',
  'pack.hidden': 'Staff hide the pack',
  'pack.shown': 'Staff show the pack again',
}
const FORMAT_LABELS: Record<WebhookFormat, string> = {
  discord: 'Discord: paste a channel\'s webhook URL (Channel settings → Integrations → Webhooks)',
  json: 'JSON, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature)',
}

const webhooksHref = (pack: Pick<PackDetail, 'namespace' | 'packId'>) => `${packHref(pack)}webhooks/`
const webhookHref = (pack: Pick<PackDetail, 'namespace' | 'packId'>, id: string) => `${webhooksHref(pack)}${encodeURIComponent(id)}/`

function changer(request: FastifyRequest): PackChanger {
  return { ...request.user!, reach: request.tokenReach }
}

function eventsFrom(values: readonly string[] | undefined): WebhookEvent[] {
  return WEBHOOK_EVENTS.filter((e) => values?.includes(e) === true)
}

/** The form's fields as the API's body: what the service checks, so a bad field is its 400 with its words. */
function formatFrom(value: string | undefined): WebhookFormat {
  return WEBHOOK_FORMATS.find((f) => f === value) ?? 'json'
}

export default async function webhookPages(app: App): Promise<void> {
  const deps = webhookDeps(app)

  app.get('/packs/:namespace/:pack_id/webhooks/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params, querystring: PageQuery },
  }, async (request, reply) => {
    const done = typeof request.query.done === 'string' ? DONE[request.query.done] : undefined
    return listPage(request, reply, { notice: done })
  })

  app.post('/packs/:namespace/:pack_id/webhooks/', {
    config: { access: 'user' },
    schema: { hide: true, params: Params, body: WebhookForm },
  }, async (request, reply) => {
    const url = (request.body.url ?? '').trim()
    const format = formatFrom(request.body.format)
    const events = eventsFrom(request.body.events)
    try {
      if (url === '') throw new BadRequest('type the address the events go to')
      if (url.length > WEBHOOK_URL_MAX) throw new BadRequest(`an address has at most ${WEBHOOK_URL_MAX} characters`)
      if (events.length === 0) throw new BadRequest('choose at least one event')
      const { webhook, secret } = await addWebhook(deps, changer(request), request.params.namespace, request.params.pack_id, { url, format, events }, publicOrigin(app.config, request))
      return listPage(request, reply, { created: { id: webhook.row.id, secret } })
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return listPage(request, reply, { error: sentence(error.detail), form: { url: url.slice(0, WEBHOOK_URL_MAX), format, events } }, error.status, error)
    }
  })

  app.get('/packs/:namespace/:pack_id/webhooks/:webhook_id/', {
    config: { access: 'user' },
    schema: { hide: true, params: WebhookParams, querystring: PageQuery },
  }, async (request, reply) => {
    const done = typeof request.query.done === 'string' ? DONE[request.query.done] : undefined
    return webhookPage(request, reply, { notice: done })
  })

  /** Runs one change of a webhook from a form: on success to `to` with its notice, on a refusal the webhook's page with the reason. */
  const change = async (request: FastifyRequest & { params: { namespace: string; pack_id: string; webhook_id: string } }, reply: FastifyReply,
    run: () => Promise<unknown>, to: (pack: Pick<PackDetail, 'namespace' | 'packId'>) => string) => {
    try {
      await run()
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return webhookPage(request, reply, { error: sentence(error.detail) }, error.status, error)
    }
    const pack = { namespace: request.params.namespace.toLowerCase(), packId: request.params.pack_id.toLowerCase() }
    return reply.redirect(to(pack), 303)
  }

  app.post('/packs/:namespace/:pack_id/webhooks/:webhook_id/', {
    config: { access: 'user' },
    schema: { hide: true, params: WebhookParams, body: WebhookForm },
  }, async (request, reply) => {
    const p = request.params
    const url = (request.body.url ?? '').trim()
    const events = eventsFrom(request.body.events)
    return change(request, reply, async () => {
      if (url.length > WEBHOOK_URL_MAX) throw new BadRequest(`an address has at most ${WEBHOOK_URL_MAX} characters`)
      if (events.length === 0) throw new BadRequest('choose at least one event')
      await changeWebhook(deps, changer(request), p.namespace, p.pack_id, p.webhook_id, {
        events, active: request.body.active === 'on', ...(url === '' ? {} : { url }),
      })
    }, (pack) => `${webhookHref(pack, p.webhook_id)}?done=saved`)
  })

  app.post('/packs/:namespace/:pack_id/webhooks/:webhook_id/delete/', {
    config: { access: 'user' },
    schema: { hide: true, params: WebhookParams, body: CsrfOnly },
  }, async (request, reply) => {
    const p = request.params
    return change(request, reply, () => removeWebhook(deps, changer(request), p.namespace, p.pack_id, p.webhook_id), (pack) => `${webhooksHref(pack)}?done=removed`)
  })

  app.post('/packs/:namespace/:pack_id/webhooks/:webhook_id/test/', {
    config: { access: 'user' },
    schema: { hide: true, params: WebhookParams, body: CsrfOnly },
  }, async (request, reply) => {
    const p = request.params
    return change(request, reply, () => sendTestEvent(deps, changer(request), p.namespace, p.pack_id, p.webhook_id), (pack) => `${webhookHref(pack, p.webhook_id)}?done=test`)
  })

  app.post('/packs/:namespace/:pack_id/webhooks/:webhook_id/deliveries/:delivery_id/redeliver/', {
    config: { access: 'user' },
    schema: { hide: true, params: DeliveryParams, body: CsrfOnly },
  }, async (request, reply) => {
    const p = request.params
    return change(request, reply, () => redeliver(deps, changer(request), p.namespace, p.pack_id, p.webhook_id, p.delivery_id), (pack) => `${webhookHref(pack, p.webhook_id)}?done=again`)
  })

  interface ListState {
    notice?: string | undefined
    error?: string
    created?: { id: string; secret: string }
    form?: { url: string; format: WebhookFormat; events: WebhookEvent[] }
  }

  async function listPage(request: FastifyRequest & { params: { namespace: string; pack_id: string } }, reply: FastifyReply, state: ListState, status = 200, cause?: DomainError): Promise<FastifyReply> {
    let found
    try {
      found = await webhooksOf(deps, changer(request), request.params.namespace, request.params.pack_id)
    } catch (error) {
      // Not theirs to manage (or not there): that refusal is the answer, not this page.
      if (error instanceof NotFound) throw cause ?? error
      throw error
    }
    const { pack, webhooks } = found
    const csrf = request.csrfToken ?? ''
    const form = state.form ?? { url: '', format: 'discord' as WebhookFormat, events: ['version.published'] as WebhookEvent[] }
    const body = html`<article class="webhooks-page">
<p class="breadcrumb"><a href="${packHref(pack)}">${pack.title}</a></p>
<h1>Webhooks of ${pack.title}</h1>
<p class="lead">A webhook tells another service when something happens to this pack: a Discord channel, or your own endpoint
receiving signed JSON. Each event is tried up to 8 times over about a day until the endpoint answers with a 2xx; one that fails for
a day is switched off, and you are told.</p>
${alertLine(state.notice, 'notice')}
${state.created ? html`<section class="card new-secret" aria-labelledby="secret-heading">
<h2 id="secret-heading">Webhook added</h2>
<p>Its signing secret, shown this once. A JSON receiver checks each delivery's <code>webhook-signature</code> with it (Discord ignores it):</p>
<p><code class="secret" id="webhook-secret">${state.created.secret}</code></p>
<p><a href="${webhookHref(pack, state.created.id)}">Open the webhook</a> to send it a test event.</p>
</section>` : null}
<section aria-labelledby="list-heading">
<h2 id="list-heading">Webhooks <span class="muted count">(${webhooks.length})</span></h2>
${webhooks.length === 0 ? html`<p class="muted">None yet.</p>` : html`<ul class="webhook-list">${webhooks.map((w) => {
    const shown = toWebhook(w)
    return html`<li><a href="${webhookHref(pack, shown.id)}"><code>${shown.url}</code></a> <span class="muted">${shown.format}</span>
${shown.active ? null : html` <span class="hidden-badge">Switched off</span>`}
<span class="muted">${shown.events.length} event${shown.events.length === 1 ? '' : 's'}</span></li>`
  })}</ul>`}
</section>
<section class="card" aria-labelledby="add-heading">
<h2 id="add-heading">Add a webhook</h2>
${alertLine(state.error)}
<form method="post" action="${webhooksHref(pack)}" class="webhook-form">
<input type="hidden" name="csrf_token" value="${csrf}">
<label for="webhook-url">Address (https)</label>
<input type="url" id="webhook-url" name="url" value="${form.url}" required maxlength="${WEBHOOK_URL_MAX}" autocomplete="off" spellcheck="false"
 placeholder="https://discord.com/api/webhooks/…">
${formatChoice(form.format)}
${eventChoice(form.events)}
<div class="actions"><button type="submit">Add webhook</button></div>
</form>
</section>
</article>`
    return sendPage(app, request, reply, { title: `Webhooks of ${pack.title}`, body, narrow: true }, status)
  }

  async function webhookPage(request: FastifyRequest & { params: { namespace: string; pack_id: string; webhook_id: string } }, reply: FastifyReply,
    state: { notice?: string | undefined; error?: string }, status = 200, cause?: DomainError): Promise<FastifyReply> {
    const p = request.params
    let found
    try {
      found = await webhookOf(deps, changer(request), p.namespace, p.pack_id, p.webhook_id)
    } catch (error) {
      if (error instanceof NotFound) throw cause ?? error
      throw error
    }
    const { pack, webhook } = found
    const shown = toWebhook(webhook)
    const attempts = toWebhookLog(await webhookLog(deps, changer(request), p.namespace, p.pack_id, p.webhook_id)).items
    const csrf = request.csrfToken ?? ''
    const here = webhookHref(pack, shown.id)
    const body = html`<article class="webhook-page">
<p class="breadcrumb"><a href="${packHref(pack)}">${pack.title}</a> › <a href="${webhooksHref(pack)}">Webhooks</a></p>
<h1>Webhook <code>${shown.url}</code></h1>
${alertLine(state.notice, 'notice')}
${alertLine(state.error)}
<p>${shown.format === 'discord' ? 'Discord messages' : 'Signed JSON'}; added ${timeTag(shown.created_at)}${shown.created_by ? html` by ${shown.created_by}` : null}.
${shown.active ? html`<strong>On.</strong>` : html`<strong>Switched off</strong>${shown.disabled_reason ? html`: ${shown.disabled_reason}` : null}.`}
${shown.failures > 0 ? html` ${shown.failures} failed ${shown.failures === 1 ? 'try' : 'tries'} since the last that worked.` : null}</p>
<div class="actions">
<form method="post" action="${here}test/" class="inline-form"><input type="hidden" name="csrf_token" value="${csrf}"><button type="submit"${shown.active ? null : html` disabled`}>Send a test event</button></form>
<form method="post" action="${here}delete/" class="inline-form"><input type="hidden" name="csrf_token" value="${csrf}"><button type="submit" class="danger">Remove webhook</button></form>
</div>
<section class="card" aria-labelledby="edit-heading">
<h2 id="edit-heading">Change it</h2>
<form method="post" action="${here}" class="webhook-form">
<input type="hidden" name="csrf_token" value="${csrf}">
<label for="webhook-url">New address <span class="hint">(leave empty to keep <code>${shown.url}</code>)</span></label>
<input type="url" id="webhook-url" name="url" maxlength="${WEBHOOK_URL_MAX}" autocomplete="off" spellcheck="false">
${eventChoice(shown.events)}
<label class="checkbox"><input type="checkbox" name="active"${shown.active ? html` checked` : null}> On: send it the events</label>
<div class="actions"><button type="submit">Save</button></div>
</form>
</section>
<section aria-labelledby="log-heading">
<h2 id="log-heading">Delivery log <span class="muted">(the last ${WEBHOOK_LOG_SIZE} tries)</span></h2>
${attempts.length === 0 ? html`<p class="muted">Nothing sent yet.</p>` : html`<div class="table-scroll"><table class="delivery-log">
<thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Try</th><th scope="col">Answer</th><th scope="col">Took</th><th scope="col">Now</th></tr></thead>
<tbody>${attempts.map((a) => html`<tr>
<td>${timeTag(a.started_at)}</td>
<td><code>${a.event}</code><br><span class="muted">${a.delivery_id}</span></td>
<td>${a.attempt}</td>
<td>${a.status === null ? html`<span class="error-text">${a.error ?? 'no answer'}</span>` : html`<strong>${a.status}</strong>`}${a.response === '' ? null : html`<pre class="response">${a.response.slice(0, 300)}</pre>`}</td>
<td>${a.duration_ms} ms</td>
<td>${a.state}${a.state === 'pending' || !shown.active ? null : html`<form method="post" action="${here}deliveries/${encodeURIComponent(a.delivery_id)}/redeliver/" class="inline-form">
<input type="hidden" name="csrf_token" value="${csrf}"><button type="submit" class="secondary" aria-label="${`Deliver ${a.delivery_id} again`}">Deliver again</button></form>`}</td>
</tr>`)}</tbody></table></div>`}
</section>
</article>`
    return sendPage(app, request, reply, { title: `Webhook of ${pack.title}`, body }, status)
  }
}

function formatChoice(chosen: WebhookFormat): SafeHtml {
  return html`<fieldset class="format-choice"><legend>Format</legend>
${WEBHOOK_FORMATS.map((f) => html`<label><input type="radio" name="format" value="${f}"${f === chosen ? html` checked` : null}> ${FORMAT_LABELS[f]}</label>`)}
</fieldset>`
}

function eventChoice(chosen: readonly WebhookEvent[]): SafeHtml {
  return html`<fieldset class="event-choice"><legend>Events</legend>
${WEBHOOK_EVENTS.map((e) => html`<label><input type="checkbox" name="events" value="${e}"${chosen.includes(e) ? html` checked` : null}> ${EVENT_LABELS[e]} <code>${e}</code></label>`)}
</fieldset>`
}
