// Sends what the outbox holds (docs/notifications.md#how-deliveries-work).
//
// Every instance runs one dispatcher. It claims due deliveries with a lease
// (claimDue: on PostgreSQL FOR UPDATE SKIP LOCKED), so with several instances
// each delivery is tried by one at a time; it tries each, records the try in
// the delivery log, and either finishes the delivery or sets its next try,
// with exponential backoff and jitter, 8 tries over about a day (RETRY_DELAYS).
// A process killed mid-try leaves its claim, which runs out after the try's
// timeout and a margin: the delivery is then due again and tried anew, with
// the same message id, so a receiver that got the first try can tell (the
// Standard Webhooks id is the receiver's key for deduplication). A webhook
// whose delivery has failed every try (a day of failures) is switched off, its
// waiting deliveries fail with it, and its pack's owner (and whoever added
// it) are told.
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../db/index.js'
import { nowIso } from '../db/time.js'
import type { WebhookSettings } from '../config/index.js'
import { unseal } from '../auth/sealed.js'
import { outboxWritten, type StoredEvent } from '../events/record.js'
import { notifyUser } from '../notifications/service.js'
import { signedFileUrls } from '../modrinth/file-links.js'
import { deliver, DEFAULT_TIMEOUT_MS, type DeliveryOutcome, type OutboundPolicy } from './outbound.js'
import { renderDelivery, TEST_EVENT } from './render.js'
import {
  claimDue, countFailure, deleteFinishedBefore, disableWebhook, findWebhookById, finishAttempt, type DeliveryRow,
} from './repository.js'
import { WEBHOOK_LOG_SIZE } from '../api/webhooks.js'
import { findEventPack } from '../events/repository.js'

/**
 * The wait before each try after the first, before jitter: 1 min, then ×3.2 each time (3 min, 10 min, 33 min,
 * 1.7 h, 5.6 h, 18 h): the 8th and last try comes about a day (26 h) after the first.
 */
export const RETRY_DELAYS_MS: readonly number[] = Array.from({ length: 7 }, (_, i) => Math.round(60_000 * 3.2 ** i))
export const MAX_TRIES = RETRY_DELAYS_MS.length + 1
/** Each wait is stretched or shrunk by up to this share at random, so deliveries that failed together spread out. */
const JITTER = 0.2
/** Deliveries one instance tries at once. */
const CONCURRENCY = 8
/** How often the outbox is looked at when nothing told this process of a new delivery. */
const POLL_MS = 1000
/** A claim outlasts the try's timeout by this much: the try's outcome is written well within it. */
const LEASE_MARGIN_MS = 5000
/** Finished deliveries are kept this long (the delivery log reads the last attempts), then deleted. */
const KEEP_FINISHED_MS = 30 * 86_400_000
/** How long after a local outbox write the outbox is read (the writing transaction commits meanwhile). */
const WAKE_DELAY_MS = 25
/** Characters of an answer the delivery log keeps: enough to read an error message. */
const RESPONSE_KEPT = 2048

/** The start of an answer as the log keeps it: control characters (but tab and line feed) replaced, so a page or terminal shows text only. */
export function keptResponse(text: string): string {
  return text.slice(0, RESPONSE_KEPT).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\uFFFD')
}

export interface DispatcherDeps {
  db: Db
  siteSecret: string
  settings: WebhookSettings
  baseUrl: string | null
  log: FastifyBaseLogger
  clock: () => number
  /** Key of the gate-free file links (src/modrinth/file-links.ts), for Discord thumbnails. */
  fileLinkKey: () => Promise<string>
  /** Tests shorten the try's timeout. */
  timeoutMs?: number | undefined
}

/** A delay with jitter: `base` ± JITTER. */
export function withJitter(base: number, random: () => number = Math.random): number {
  return Math.round(base * (1 - JITTER + 2 * JITTER * random()))
}

export class Dispatcher {
  /** This process's name in claims; a new one each start, so a restarted process never mistakes an old claim for its own. */
  readonly claimer = `${process.pid}-${randomUUID()}`
  private running = 0
  private stopped = false
  private timer: NodeJS.Timeout | undefined
  private ticking = false
  private again = false
  private readonly inFlight = new Set<Promise<void>>()
  private readonly aborts = new Set<AbortController>()
  private readonly wake = () => this.soon(WAKE_DELAY_MS)
  private lastPrune = 0

  constructor(private readonly deps: DispatcherDeps) {}

  private get policy(): OutboundPolicy {
    return { allowHttp: this.deps.settings.allowHttp, allowHosts: this.deps.settings.allowHosts, timeoutMs: this.deps.timeoutMs ?? DEFAULT_TIMEOUT_MS }
  }

  start(): void {
    outboxWritten.on('written', this.wake)
    this.soon(0)
  }

  /** Stops claiming; tries under way are cut short (their claims run out and another instance, or the next start, tries again). */
  async stop(): Promise<void> {
    this.stopped = true
    outboxWritten.off('written', this.wake)
    if (this.timer) clearTimeout(this.timer)
    for (const abort of this.aborts) abort.abort()
    await Promise.allSettled([...this.inFlight])
  }

  /** Reads the outbox after `ms` (sooner if already due). */
  private soon(ms: number): void {
    if (this.stopped) return
    if (this.timer) clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.tick(), ms)
    // A dispatcher never keeps a process alive: a server ends when its listener does.
    this.timer.unref()
  }

  /** Claims what it has room for and starts trying it; reads again once a try ends, or after POLL_MS. */
  async tick(): Promise<void> {
    if (this.stopped) return
    if (this.ticking) {
      this.again = true
      return
    }
    this.ticking = true
    try {
      do {
        this.again = false
        const room = CONCURRENCY - this.running
        if (room <= 0) break
        const now = this.deps.clock()
        const lease = (this.deps.timeoutMs ?? DEFAULT_TIMEOUT_MS) + LEASE_MARGIN_MS
        const claimed = await claimDue(this.deps.db, this.claimer, nowIso(now), nowIso(now + lease), room)
        for (const delivery of claimed) this.launch(delivery)
        if (claimed.length === room) this.again = true
      } while (this.again && !this.stopped)
      await this.prune()
    } catch (error) {
      if (!this.stopped) this.deps.log.warn({ err: error }, 'webhook dispatcher: reading the outbox failed; trying again shortly')
    } finally {
      this.ticking = false
      this.soon(POLL_MS)
    }
  }

  private launch(delivery: DeliveryRow): void {
    this.running += 1
    const done = this.attempt(delivery)
      .catch((error: unknown) => {
        if (!this.stopped) this.deps.log.warn({ err: error, delivery: delivery.id }, 'webhook dispatcher: a try could not be recorded; it is tried again when its claim runs out')
      })
      .finally(() => {
        this.running -= 1
        this.inFlight.delete(done)
        this.soon(0)
      })
    this.inFlight.add(done)
  }

  /** One try of a claimed delivery, and where it stands after it. */
  private async attempt(delivery: DeliveryRow): Promise<void> {
    const { db } = this.deps
    const webhook = await findWebhookById(db, delivery.webhook_id)
    if (!webhook) return
    const stored = JSON.parse(delivery.payload) as StoredEvent
    const startedAt = this.deps.clock()
    let outcome: DeliveryOutcome
    if (webhook.disabled_at !== null) {
      outcome = { status: null, durationMs: 0, response: '', truncated: false, error: 'the webhook is switched off' }
    } else {
      const url = unseal(this.deps.siteSecret, 'webhook-url', webhook.url_sealed)
      const secret = unseal(this.deps.siteSecret, 'webhook-secret', webhook.secret_sealed)
      const origin = this.deps.baseUrl ?? webhook.origin
      const request = renderDelivery(stored, {
        format: webhook.format,
        absolute: (path) => `${origin}${path}`,
        thumbnailUrl: await this.thumbnailUrl(stored, webhook.pack_row_id, origin),
        secret,
        messageId: delivery.id,
        timestampSeconds: Math.floor(startedAt / 1000),
      })
      const abort = new AbortController()
      this.aborts.add(abort)
      try {
        outcome = await deliver({ url, body: request.body, headers: request.headers }, { ...this.policy, signal: abort.signal })
      } finally {
        this.aborts.delete(abort)
      }
      // Stopped mid-try: the outcome is of our own making, not the receiver's; the claim runs out and the try is made again.
      if (this.stopped) return
    }
    const ok = outcome.status !== null && outcome.status >= 200 && outcome.status < 300
    const isTest = delivery.event === TEST_EVENT
    const tries = delivery.attempts + 1
    const finishedAt = this.deps.clock()
    const last = ok || isTest || tries >= MAX_TRIES || webhook.disabled_at !== null
    const next = last
      ? { state: ok ? 'delivered' as const : 'failed' as const, nextAttemptAt: nowIso(finishedAt), finishedAt: nowIso(finishedAt) }
      : { state: 'pending' as const, nextAttemptAt: nowIso(finishedAt + withJitter(RETRY_DELAYS_MS[tries - 1]!)), finishedAt: null }
    await db.transaction().execute(async (trx) => {
      const written = await finishAttempt(trx, delivery, this.claimer, {
        id: randomUUID(), startedAt: nowIso(startedAt), durationMs: outcome.durationMs, status: outcome.status,
        error: outcome.error ?? (ok ? null : `answered ${outcome.status}`), response: keptResponse(outcome.response),
      }, next, WEBHOOK_LOG_SIZE)
      if (!written || isTest || webhook.disabled_at !== null) return
      const failures = await countFailure(trx, webhook.id, !ok)
      // Every try of this delivery failed, over a day, and nothing succeeded since: the endpoint is gone. (A
      // delivery tried again by hand past its last try does not count: its owner is watching.)
      if (!ok && tries === MAX_TRIES && failures > 0) await this.switchOff(trx, webhook.id, webhook.pack_row_id, webhook.created_by, webhook.url_shown, outcome, finishedAt)
    })
  }

  private async switchOff(trx: Db, id: string, packRowId: string, createdBy: string, urlShown: string, outcome: DeliveryOutcome, at: number): Promise<void> {
    const reason = `every try of a delivery failed for a day (the last: ${outcome.error ?? `answered ${outcome.status}`})`
    if (!(await disableWebhook(trx, id, nowIso(at), reason))) return
    const pack = await findEventPack(trx, packRowId)
    if (!pack) return
    const data = { namespace: pack.namespace, pack_id: pack.packId, title: pack.title, webhook: urlShown, reason }
    for (const userId of new Set([pack.ownerId, createdBy])) await notifyUser(trx, userId, 'webhook.disabled', pack.id, data, at)
    this.deps.log.warn({ webhook: id, pack: `${pack.namespace}:${pack.packId}` }, 'webhook switched off after a day of failed deliveries')
  }

  /** A gate-free link to the pack's thumbnail for a Discord embed, while the pack is one everyone may see. */
  private async thumbnailUrl(stored: StoredEvent, packRowId: string, origin: string): Promise<string | null> {
    if (stored.thumbnailFileId === null) return null
    const pack = await findEventPack(this.deps.db, packRowId)
    if (!pack?.listed) return null
    return signedFileUrls(await this.deps.fileLinkKey(), origin, this.deps.clock()).file(stored.thumbnailFileId)
  }

  /** At most once a minute: finished deliveries past KEEP_FINISHED_MS go. */
  private async prune(): Promise<void> {
    const now = this.deps.clock()
    if (now - this.lastPrune < 60_000) return
    this.lastPrune = now
    await deleteFinishedBefore(this.deps.db, nowIso(now - KEEP_FINISHED_MS), 1000)
  }
}
