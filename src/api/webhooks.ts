// A pack's webhooks through the API (docs/notifications.md#webhooks): what they receive, in which format,
// and the log of their deliveries.
import { Type, type Static } from 'typebox'
import type { Literals } from './common.js'

const DateTime = Type.String({ format: 'date-time' })

/** The events a webhook may receive. */
export const WEBHOOK_EVENTS = ['version.published', 'version.yanked', 'version.deleted', 'pack.edited', 'pack.hidden', 'pack.shown'] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]

/** discord: a Discord channel's webhook (a message with an embed); json: a Standard Webhooks signed JSON body. */
export const WEBHOOK_FORMATS = ['discord', 'json'] as const
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number]

/** Webhooks one pack may have. */
export const WEBHOOKS_PER_PACK = 10
/** Webhooks one user may have added, over all packs. */
export const WEBHOOKS_PER_USER = 25
/** Attempts a webhook's delivery log shows. */
export const WEBHOOK_LOG_SIZE = 50
/** The longest webhook address accepted. */
export const WEBHOOK_URL_MAX = 2000

const EventList = Type.Array(Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e)) as Literals<typeof WEBHOOK_EVENTS>), {
  minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true,
  description: 'version.published, version.yanked, version.deleted, pack.edited (title, summary, description, tags, category, '
    + 'media), pack.hidden and pack.shown (by staff).',
})
const Format = Type.Union(WEBHOOK_FORMATS.map((f) => Type.Literal(f)) as Literals<typeof WEBHOOK_FORMATS>, {
  description: 'discord: a message with an embed, for a Discord channel\'s webhook URL; json: the event as JSON, signed per the '
    + 'Standard Webhooks specification (webhook-id, webhook-timestamp, webhook-signature).',
})
const Url = Type.String({
  minLength: 1, maxLength: WEBHOOK_URL_MAX,
  description: 'https (http only where the site allows it). Refused when its host resolves to a loopback, private, link-local, '
    + 'shared (CGNAT), multicast or unspecified address, or a cloud metadata address.',
})

export const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String({ description: 'The address, shortened: it may carry a secret (a Discord webhook URL does), shown only once.' }),
  format: Format,
  events: EventList,
  active: Type.Boolean({ description: 'false: switched off (by its owner, or after failing for a day); nothing is sent to it.' }),
  disabled_at: Type.Union([DateTime, Type.Null()]),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  failures: Type.Integer({ minimum: 0, description: 'Tries that failed since the last that succeeded.' }),
  created_by: Type.Union([Type.String(), Type.Null()], { description: 'Who added it (null: that account is gone).' }),
  created_at: DateTime,
  updated_at: DateTime,
}, { title: 'Webhook' })
export type WebhookBody = Static<typeof Webhook>

export const WebhookCreated = Type.Intersect([Webhook, Type.Object({
  secret: Type.String({ description: 'The signing secret (whsec_…), shown this once. A json webhook\'s receiver verifies each '
    + 'delivery with it; Discord ignores it.' }),
})], { title: 'WebhookCreated' })
export type WebhookCreatedBody = Static<typeof WebhookCreated>

export const WebhookList = Type.Object({ items: Type.Array(Webhook) }, { title: 'WebhookList' })

export const NewWebhook = Type.Object({
  url: Url,
  format: Format,
  events: EventList,
}, { additionalProperties: false })
export type NewWebhookBody = Static<typeof NewWebhook>

export const WebhookPatch = Type.Object({
  url: Type.Optional(Url),
  events: Type.Optional(EventList),
  active: Type.Optional(Type.Boolean({ description: 'false switches it off; true switches it on again (its failures start from 0).' })),
}, { additionalProperties: false, minProperties: 1 })
export type WebhookPatchBody = Static<typeof WebhookPatch>

export const WebhookParams = Type.Object({
  namespace: Type.String({ description: 'Matched case-insensitively.' }),
  pack_id: Type.String({ description: 'Matched case-insensitively.' }),
  webhook_id: Type.String({ maxLength: 64 }),
})

export const DeliveryParams = Type.Object({
  namespace: Type.String(),
  pack_id: Type.String(),
  webhook_id: Type.String({ maxLength: 64 }),
  delivery_id: Type.String({ maxLength: 64 }),
})

export const WebhookAttempt = Type.Object({
  delivery_id: Type.String({ description: 'The message id (webhook-id): the same on every try of one event.' }),
  event: Type.String({ description: 'The event type, or webhook.test for a test event.' }),
  started_at: DateTime,
  duration_ms: Type.Integer({ minimum: 0 }),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'The answer\'s HTTP status; null when none came.' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'Why the try failed, when it did.' }),
  response: Type.String({ description: 'The first bytes of the answer\'s body, as text.' }),
  state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
    description: 'Where the delivery stands now: pending (another try is due), delivered, or failed (no more tries).',
  }),
  attempt: Type.Integer({ minimum: 1, description: 'Which try of the delivery this was.' }),
}, { title: 'WebhookAttempt' })

export const WebhookLog = Type.Object({
  items: Type.Array(WebhookAttempt, { description: `The last ${WEBHOOK_LOG_SIZE} tries, newest first.` }),
}, { title: 'WebhookLog' })
export type WebhookLogBody = Static<typeof WebhookLog>

export const DeliveryQueued = Type.Object({
  delivery_id: Type.String({ description: 'The message id of the delivery that was queued.' }),
}, { title: 'DeliveryQueued' })
