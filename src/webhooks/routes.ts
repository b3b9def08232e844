// A pack's webhooks through the API (docs/notifications.md#webhooks). The use cases are ./service.ts's; the
// dispatcher that sends them is ./dispatcher.ts.
import type { FastifyRequest } from 'fastify'
import type { App } from '../http/types.js'
import { NoContent, bearerAuth, errorResponses } from '../api/common.js'
import { PackParams } from '../api/packs.js'
import {
  DeliveryParams, DeliveryQueued, NewWebhook, Webhook, WebhookCreated, WebhookList, WebhookLog, WebhookParams, WebhookPatch,
  WEBHOOKS_PER_PACK, WEBHOOKS_PER_USER,
} from '../api/webhooks.js'
import { publicOrigin } from '../http/urls.js'
import type { PackChanger } from '../packs/service.js'
import { toWebhook, toWebhookLog } from './mapper.js'
import {
  addWebhook, changeWebhook, redeliver, removeWebhook, sendTestEvent, webhookLog, webhookOf, webhooksOf, type WebhookDeps,
} from './service.js'

export function webhookDeps(app: App): WebhookDeps {
  return { db: app.db, siteSecret: app.gate.siteSecret, settings: app.config.webhooks, clock: app.clock }
}

function changer(request: FastifyRequest): PackChanger {
  return { ...request.user!, reach: request.tokenReach }
}

const TAGS = ['webhooks']

export default async function webhookRoutes(app: App): Promise<void> {
  const deps = webhookDeps(app)

  app.get('/api/packs/:namespace/:pack_id/webhooks/', {
    config: { access: 'user' },
    schema: {
      summary: 'A pack\'s webhooks',
      description: 'For the owner, maintainers and staff; to anyone else the pack is 404.',
      tags: TAGS, security: bearerAuth, params: PackParams,
      response: { 200: WebhookList, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const { webhooks } = await webhooksOf(deps, changer(request), request.params.namespace, request.params.pack_id)
    return { items: webhooks.map(toWebhook) }
  })

  app.post('/api/packs/:namespace/:pack_id/webhooks/', {
    config: { access: 'user' },
    schema: {
      summary: 'Add a webhook to a pack',
      description: 'The owner, a maintainer or staff adds an address that hears of the pack\'s events, as a Discord message or as '
        + 'JSON signed per the Standard Webhooks specification. The answer carries the signing secret, shown this once. The '
        + 'address must be https (http only where the site allows it) and may not lead to a loopback, private, link-local, '
        + `shared, multicast, unspecified or cloud metadata address (400). A pack has at most ${WEBHOOKS_PER_PACK} webhooks, an `
        + `account may add at most ${WEBHOOKS_PER_USER} (409).`,
      tags: TAGS, security: bearerAuth, params: PackParams, body: NewWebhook,
      response: { 201: WebhookCreated, ...errorResponses(400, 401, 404, 409) },
    },
  }, async (request, reply) => {
    const { webhook, secret } = await addWebhook(deps, changer(request), request.params.namespace, request.params.pack_id, request.body, publicOrigin(app.config, request))
    return reply.code(201).send({ ...toWebhook(webhook), secret })
  })

  app.get('/api/packs/:namespace/:pack_id/webhooks/:webhook_id/', {
    config: { access: 'user' },
    schema: {
      summary: 'One of a pack\'s webhooks',
      tags: TAGS, security: bearerAuth, params: WebhookParams,
      response: { 200: Webhook, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const p = request.params
    return toWebhook((await webhookOf(deps, changer(request), p.namespace, p.pack_id, p.webhook_id)).webhook)
  })

  app.patch('/api/packs/:namespace/:pack_id/webhooks/:webhook_id/', {
    config: { access: 'user' },
    schema: {
      summary: 'Change a webhook',
      description: 'Its address (checked as when added), its events, or whether it is on. Switching it on again starts its '
        + 'failure count from 0; what failed while it was off is not sent again unless delivered again by hand.',
      tags: TAGS, security: bearerAuth, params: WebhookParams, body: WebhookPatch,
      response: { 200: Webhook, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const p = request.params
    return toWebhook(await changeWebhook(deps, changer(request), p.namespace, p.pack_id, p.webhook_id, request.body))
  })

  app.delete('/api/packs/:namespace/:pack_id/webhooks/:webhook_id/', {
    config: { access: 'user' },
    schema: {
      summary: 'Remove a webhook',
      description: 'With its waiting deliveries and its delivery log.',
      tags: TAGS, security: bearerAuth, params: WebhookParams,
      response: { 204: NoContent, ...errorResponses(401, 404) },
    },
  }, async (request, reply) => {
    const p = request.params
    await removeWebhook(deps, changer(request), p.namespace, p.pack_id, p.webhook_id)
    return reply.code(204).send(null)
  })

  app.get('/api/packs/:namespace/:pack_id/webhooks/:webhook_id/deliveries/', {
    config: { access: 'user' },
    schema: {
      summary: 'A webhook\'s delivery log',
      description: 'Its last 50 tries, newest first: when, the answer\'s status, how long it took, the first bytes of the answer.',
      tags: TAGS, security: bearerAuth, params: WebhookParams,
      response: { 200: WebhookLog, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const p = request.params
    return toWebhookLog(await webhookLog(deps, changer(request), p.namespace, p.pack_id, p.webhook_id))
  })

  app.post('/api/packs/:namespace/:pack_id/webhooks/:webhook_id/test/', {
    config: { access: 'user' },
    schema: {
      summary: 'Send a test event',
      description: 'Queues a webhook.test event, tried once within a second or so; its outcome shows in the delivery log. A '
        + 'switched-off webhook is 409.',
      tags: TAGS, security: bearerAuth, params: WebhookParams,
      response: { 202: DeliveryQueued, ...errorResponses(401, 404, 409) },
    },
  }, async (request, reply) => {
    const p = request.params
    return reply.code(202).send({ delivery_id: await sendTestEvent(deps, changer(request), p.namespace, p.pack_id, p.webhook_id) })
  })

  app.post('/api/packs/:namespace/:pack_id/webhooks/:webhook_id/deliveries/:delivery_id/redeliver/', {
    config: { access: 'user' },
    schema: {
      summary: 'Deliver again',
      description: 'Tries a delivery again now, with the same message id (webhook-id) and body. One still waiting for its next '
        + 'try, or a switched-off webhook, is 409.',
      tags: TAGS, security: bearerAuth, params: DeliveryParams,
      response: { 202: DeliveryQueued, ...errorResponses(401, 404, 409) },
    },
  }, async (request, reply) => {
    const p = request.params
    await redeliver(deps, changer(request), p.namespace, p.pack_id, p.webhook_id, p.delivery_id)
    return reply.code(202).send({ delivery_id: p.delivery_id })
  })
}
