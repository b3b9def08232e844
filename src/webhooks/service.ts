// A pack's webhooks (docs/notifications.md#webhooks): adding, changing and removing them, their delivery
// log, a test event and delivering again. Who may is src/packs/policy.ts's 'manage-webhooks' (the owner,
// maintainers, staff). The address and the signing secret are sealed with the site secret; the address is
// checked when saved (and again by the dispatcher at every connect: src/webhooks/outbound.ts).
import { randomUUID } from 'node:crypto'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import type { WebhookSettings } from '../config/index.js'
import {
  WEBHOOK_LOG_SIZE, WEBHOOKS_PER_PACK, WEBHOOKS_PER_USER, type NewWebhookBody, type WebhookPatchBody,
} from '../api/webhooks.js'
import { seal } from '../auth/sealed.js'
import { newMessageId, outboxWritten, packPath, type StoredEvent } from '../events/record.js'
import { actorOf, packFor, type PackChanger } from '../packs/service.js'
import type { PackDetail } from '../packs/repository.js'
import { checkWebhookUrl } from './outbound.js'
import { TEST_EVENT } from './render.js'
import { newWebhookSecret } from './standard-webhooks.js'
import {
  countWebhooks, deleteWebhook, lockForAdding, findDelivery, findWebhook, insertDelivery, insertWebhook, listAttempts, listWebhooks, requeueDelivery,
  updateWebhook, usernamesOf, type AttemptRecord, type WebhookChanges, type WebhookRow,
} from './repository.js'

export interface WebhookDeps {
  db: Db
  siteSecret: string
  settings: WebhookSettings
  clock?: () => number
}

export interface WebhookView {
  row: WebhookRow
  createdBy: string | null
}

async function managedPack(db: Db, actor: PackChanger, namespace: string, packId: string): Promise<PackDetail> {
  return packFor(db, namespace.toLowerCase(), packId.toLowerCase(), actorOf(actor), 'manage-webhooks')
}

async function views(db: Db, rows: readonly WebhookRow[]): Promise<WebhookView[]> {
  const names = await usernamesOf(db, rows.map((r) => r.created_by))
  return rows.map((row) => ({ row, createdBy: names.get(row.created_by) ?? null }))
}

export async function webhooksOf(deps: WebhookDeps, actor: PackChanger, namespace: string, packId: string): Promise<{ pack: PackDetail; webhooks: WebhookView[] }> {
  const pack = await managedPack(deps.db, actor, namespace, packId)
  return { pack, webhooks: await views(deps.db, await listWebhooks(deps.db, pack.id)) }
}

async function mustFind(db: Db, pack: PackDetail, webhookId: string): Promise<WebhookRow> {
  const row = await findWebhook(db, pack.id, webhookId)
  if (!row) throw new NotFound('webhook not found')
  return row
}

export async function webhookOf(deps: WebhookDeps, actor: PackChanger, namespace: string, packId: string, webhookId: string): Promise<{ pack: PackDetail; webhook: WebhookView }> {
  const pack = await managedPack(deps.db, actor, namespace, packId)
  const [webhook] = await views(deps.db, [await mustFind(deps.db, pack, webhookId)])
  return { pack, webhook: webhook! }
}

/**
 * The address as it may be shown: scheme, host and the first characters of the path. The rest may be a
 * secret (a Discord webhook URL's last segment is the channel's token; other services put keys in the query).
 */
export function shortenedUrl(url: URL): string {
  const path = url.pathname.length > 24 ? `${url.pathname.slice(0, 24)}…` : url.pathname
  return `${url.protocol}//${url.host}${path}${url.search !== '' && !path.endsWith('…') ? '?…' : ''}`
}

/** Parses and checks an address as one a webhook may send to now; the reason in words when not. */
async function checkedUrl(settings: WebhookSettings, raw: string): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new BadRequest('url is not an absolute URL')
  }
  const refused = await checkWebhookUrl(raw, { allowHttp: settings.allowHttp, allowHosts: settings.allowHosts })
  if (refused !== null) throw new BadRequest(`url is refused: ${refused}`)
  return url
}

/** Adds a webhook; its signing secret is returned this once. `origin` is the site's public origin as this request sees it. */
export async function addWebhook(deps: WebhookDeps, actor: PackChanger, namespace: string, packId: string, body: NewWebhookBody, origin: string): Promise<{ webhook: WebhookView; secret: string }> {
  const pack = await managedPack(deps.db, actor, namespace, packId)
  if (actor.id === null) throw new BadRequest('webhooks are added by a signed-in user')
  const creator = actor.id
  const url = await checkedUrl(deps.settings, body.url)
  const secret = newWebhookSecret()
  const now = nowIso((deps.clock ?? Date.now)())
  const row: WebhookRow = {
    id: randomUUID(), pack_row_id: pack.id, created_by: creator, url_sealed: seal(deps.siteSecret, 'webhook-url', body.url), url_shown: shortenedUrl(url),
    origin, format: body.format, events: [...new Set(body.events)].join(','), secret_sealed: seal(deps.siteSecret, 'webhook-secret', secret),
    created_at: now, updated_at: now, disabled_at: null, disabled_reason: null, failures: 0,
  }
  await deps.db.transaction().execute(async (trx) => {
    // Two adds at once by one user (or on one pack) take turns here, so neither bound can be passed.
    await lockForAdding(trx, creator, pack.id)
    if ((await countWebhooks(trx, 'pack_row_id', pack.id)) >= WEBHOOKS_PER_PACK) throw new Conflict(`a pack has at most ${WEBHOOKS_PER_PACK} webhooks: remove one first`)
    if ((await countWebhooks(trx, 'created_by', creator)) >= WEBHOOKS_PER_USER) throw new Conflict(`you have added ${WEBHOOKS_PER_USER} webhooks, the most one account may: remove one first`)
    await insertWebhook(trx, row)
  })
  const [webhook] = await views(deps.db, [row])
  return { webhook: webhook!, secret }
}

export async function changeWebhook(deps: WebhookDeps, actor: PackChanger, namespace: string, packId: string, webhookId: string, patch: WebhookPatchBody): Promise<WebhookView> {
  const pack = await managedPack(deps.db, actor, namespace, packId)
  const current = await mustFind(deps.db, pack, webhookId)
  const now = nowIso((deps.clock ?? Date.now)())
  const changes: WebhookChanges = { updated_at: now }
  if (patch.url !== undefined) {
    const url = await checkedUrl(deps.settings, patch.url)
    changes.url_sealed = seal(deps.siteSecret, 'webhook-url', patch.url)
    changes.url_shown = shortenedUrl(url)
  }
  if (patch.events !== undefined) changes.events = [...new Set(patch.events)].join(',')
  if (patch.active === false && current.disabled_at === null) {
    changes.disabled_at = now
    changes.disabled_reason = 'switched off by hand'
  }
  if (patch.active === true && current.disabled_at !== null) {
    changes.disabled_at = null
    changes.disabled_reason = null
    changes.failures = 0
  }
  await updateWebhook(deps.db, current.id, changes)
  return (await webhookOf(deps, actor, namespace, packId, webhookId)).webhook
}

export async function removeWebhook(deps: WebhookDeps, actor: PackChanger, namespace: string, packId: string, webhookId: string): Promise<void> {
  const pack = await managedPack(deps.db, actor, namespace, packId)
  await deleteWebhook(deps.db, (await mustFind(deps.db, pack, webhookId)).id)
}

export async function webhookLog(deps: WebhookDeps, actor: PackChanger, namespace: string, packId: string, webhookId: string): Promise<AttemptRecord[]> {
  const pack = await managedPack(deps.db, actor, namespace, packId)
  return listAttempts(deps.db, (await mustFind(deps.db, pack, webhookId)).id, WEBHOOK_LOG_SIZE)
}

/** Queues a test event (webhook.test) for the webhook, tried once; returns its message id. */
export async function sendTestEvent(deps: WebhookDeps, actor: PackChanger, namespace: string, packId: string, webhookId: string): Promise<string> {
  const pack = await managedPack(deps.db, actor, namespace, packId)
  const webhook = await mustFind(deps.db, pack, webhookId)
  if (webhook.disabled_at !== null) throw new Conflict('the webhook is switched off: switch it on to send to it')
  const now = (deps.clock ?? Date.now)()
  const stored: StoredEvent = {
    event: {
      type: TEST_EVENT, timestamp: nowIso(now),
      data: { pack: { id: pack.shortId ?? null, namespace: pack.namespace, pack_id: pack.packId, title: pack.title, url: packPath(pack) }, test: true },
    },
    thumbnailFileId: null,
  }
  const id = newMessageId()
  await insertDelivery(deps.db, { id, webhook_id: webhook.id, event: TEST_EVENT, payload: JSON.stringify(stored), created_at: nowIso(now) })
  outboxWritten.emit('written')
  return id
}

/** Tries a delivery again now, with the same message id and body. */
export async function redeliver(deps: WebhookDeps, actor: PackChanger, namespace: string, packId: string, webhookId: string, deliveryId: string): Promise<void> {
  const pack = await managedPack(deps.db, actor, namespace, packId)
  const webhook = await mustFind(deps.db, pack, webhookId)
  if (webhook.disabled_at !== null) throw new Conflict('the webhook is switched off: switch it on to send to it')
  const delivery = await findDelivery(deps.db, webhook.id, deliveryId)
  if (!delivery) throw new NotFound('delivery not found')
  if (delivery.state === 'pending') throw new Conflict('that delivery is waiting for its next try already')
  await requeueDelivery(deps.db, delivery.id, nowIso((deps.clock ?? Date.now)()))
  outboxWritten.emit('written')
}
