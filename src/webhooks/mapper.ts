// Webhooks and their delivery log as the API shows them (src/api/webhooks.ts). The address is only ever shown
// shortened and the secret never: both may be what lets someone post into a channel.
import type { WebhookBody, WebhookEvent, WebhookFormat, WebhookLogBody } from '../api/webhooks.js'
import type { AttemptRecord } from './repository.js'
import type { WebhookView } from './service.js'

export function toWebhook({ row, createdBy }: WebhookView): WebhookBody {
  return {
    id: row.id,
    url: row.url_shown,
    format: row.format as WebhookFormat,
    events: row.events.split(',').filter((e) => e !== '') as WebhookEvent[],
    active: row.disabled_at === null,
    disabled_at: row.disabled_at,
    disabled_reason: row.disabled_reason,
    failures: Number(row.failures),
    created_by: createdBy,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
}

export function toWebhookLog(attempts: readonly AttemptRecord[]): WebhookLogBody {
  return {
    items: attempts.map((a) => ({
      delivery_id: a.delivery_id,
      event: a.event,
      started_at: a.started_at,
      duration_ms: Number(a.duration_ms),
      status: a.status === null ? null : Number(a.status),
      error: a.error,
      response: a.response,
      state: a.state as 'pending' | 'delivered' | 'failed',
      attempt: Number(a.attempt),
    })),
  }
}
