// What one try of a delivery sends: the event, as recorded in the outbox, in the webhook's format. Made again
// for each try from the same stored event, so every try carries the same body; only webhook-timestamp and the
// signature over it change (Standard Webhooks signs "id.timestamp.body").
import type { StoredEvent } from '../events/record.js'
import type { WebhookEvent } from '../api/webhooks.js'
import { discordMessage, cutText, DISCORD_LIMITS } from './discord.js'
import { signedHeaders } from './standard-webhooks.js'

/** The event type of a test delivery ("send a test event"). */
export const TEST_EVENT = 'webhook.test'

export interface RenderContext {
  format: string
  /** Absolute URL of a path of this site. */
  absolute: (path: string) => string
  /** A link to the pack's thumbnail that opens without the gate, if it has one everyone may see. */
  thumbnailUrl: string | null
  /** The webhook's signing secret (whsec_…). */
  secret: string
  messageId: string
  timestampSeconds: number
}

export interface RenderedDelivery {
  body: string
  headers: Record<string, string>
}

interface EventData {
  pack?: { title?: string; url?: string }
  version?: { name?: string; url?: string; changelog?: string }
  reason?: string
}

/** The stored event with its links made absolute: the JSON body a json webhook receives. */
export function eventBody(stored: StoredEvent, absolute: (path: string) => string): Record<string, unknown> {
  const data = structuredClone(stored.event.data) as Record<string, unknown> & EventData
  if (data.pack?.url !== undefined) data.pack.url = absolute(data.pack.url)
  if (data.version?.url !== undefined) data.version.url = absolute(data.version.url)
  return { type: stored.event.type, timestamp: stored.event.timestamp, data }
}

export function renderDelivery(stored: StoredEvent, ctx: RenderContext): RenderedDelivery {
  const json = eventBody(stored, ctx.absolute)
  const body = ctx.format === 'discord' ? JSON.stringify(discordBody(stored, json, ctx)) : JSON.stringify(json)
  return {
    body,
    headers: { 'content-type': 'application/json', ...signedHeaders(ctx.secret, ctx.messageId, ctx.timestampSeconds, body) },
  }
}

function discordBody(stored: StoredEvent, json: Record<string, unknown>, ctx: RenderContext): unknown {
  const data = json.data as EventData
  const packTitle = data.pack?.title ?? 'A pack'
  const packUrl = data.pack?.url ?? ctx.absolute('/')
  if (stored.event.type === TEST_EVENT) {
    return {
      content: cutText(`A test event from Packs for ${packTitle}: this channel will hear about the pack's events.`, DISCORD_LIMITS.content),
      allowed_mentions: { parse: [] },
    }
  }
  return discordMessage({
    event: stored.event.type as WebhookEvent,
    pack: { title: packTitle, url: packUrl, thumbnailUrl: ctx.thumbnailUrl },
    version: data.version?.name === undefined ? null : { name: data.version.name, url: data.version.url ?? null, changelog: data.version.changelog ?? null },
    reason: data.reason ?? null,
    at: stored.event.timestamp,
  })
}
