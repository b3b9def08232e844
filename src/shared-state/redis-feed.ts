// What instances tell each other, pushed by Redis pub/sub on one channel: a
// pack changed (drop its update-check answers), a client failed a password
// (ask Redis before letting it in). Instances act on it at once; an instance
// that may have missed messages (its subscription dropped, or it just
// started) calls its resync handlers when the subscription is back, and until
// then `live()` is false, so its callers ask Redis on every request instead.
//
// Staleness is bounded: a subscription is live only while its connection
// answered a PING within LIVE_MS. A connection that dies silently is caught by
// the next missed PING, and the callers go back to asking Redis.
import { randomBytes } from 'node:crypto'
import { KEY_PREFIX, type RedisClient } from './redis.js'

/**
 * The channel of the site on Redis database `database` (REDIS_URL's path): pub/sub is not per database, and
 * two sites on one Redis server must not hear each other.
 */
export function channelOf(database: number): string {
  return `${KEY_PREFIX}events:${database}`
}
/** How often the subscription is checked, and how long an answer to the check counts. */
const PING_MS = 1000
export const LIVE_MS = 3000

type Handler = (payload: string) => void

/** The database the client selected (REDIS_URL's path; 0 by default). */
export function databaseOf(client: RedisClient): number {
  return (client.options as { database?: number } | undefined)?.database ?? 0
}

/** A message on the channel: the sender's id (a process that does not listen, such as the CLI, says so), its type, its payload. */
export function eventMessage(instance: string, type: string, payload: string): string {
  return `${instance} ${type} ${payload}`
}

export class RedisFeed {
  /** This instance's id: its own messages are not acted on twice. */
  private readonly instance = randomBytes(6).toString('hex')
  private readonly handlers = new Map<string, Handler[]>()
  /** How many times messages may have been missed and the resync handlers ran (tests, diagnostics). */
  resyncs = 0
  private readonly resyncHandlers: Array<() => void> = []
  private subscribed = false
  private lastPong = 0
  private timer: NodeJS.Timeout | undefined

  private constructor(private readonly publisher: RedisClient, private readonly subscriber: RedisClient, readonly channel: string) {}

  /** A feed on its own connection (a subscribed connection can do nothing else), subscribed before it returns. */
  static async open(client: RedisClient, onError: (error: Error) => void): Promise<RedisFeed> {
    const subscriber = client.duplicate()
    subscriber.on('error', onError)
    const feed = new RedisFeed(client, subscriber, channelOf(databaseOf(client)))
    // After a reconnection node-redis subscribes again by itself; messages sent meanwhile are lost.
    subscriber.on('end', () => { feed.subscribed = false })
    subscriber.on('reconnecting', () => { feed.subscribed = false })
    subscriber.on('ready', () => { if (!feed.subscribed && feed.timer !== undefined) void feed.resubscribed() })
    await subscriber.connect()
    await subscriber.subscribe(feed.channel, (message) => feed.receive(message))
    feed.subscribed = true
    feed.lastPong = Date.now()
    feed.timer = setInterval(() => void feed.ping(), PING_MS)
    feed.timer.unref()
    return feed
  }

  /** Whether every message sent by another instance up to about now has been received. */
  live(): boolean {
    return this.subscribed && Date.now() - this.lastPong < LIVE_MS
  }

  on(type: string, handler: Handler): void {
    const handlers = this.handlers.get(type)
    if (handlers) handlers.push(handler)
    else this.handlers.set(type, [handler])
  }

  /** Called when messages may have been missed, once the subscription is back. */
  onResync(handler: () => void): void {
    this.resyncHandlers.push(handler)
  }

  /** Tells the other instances; resolves once Redis has taken the message. */
  async publish(type: string, payload: string): Promise<void> {
    await this.publisher.publish(this.channel, eventMessage(this.instance, type, payload))
  }

  async close(): Promise<void> {
    clearInterval(this.timer)
    this.timer = undefined
    this.subscribed = false
    if (this.subscriber.isOpen) await this.subscriber.close()
  }

  private receive(message: string): void {
    const first = message.indexOf(' ')
    const second = message.indexOf(' ', first + 1)
    if (first === -1 || second === -1 || message.slice(0, first) === this.instance) return
    const payload = message.slice(second + 1)
    for (const handler of this.handlers.get(message.slice(first + 1, second)) ?? []) handler(payload)
  }

  private async ping(): Promise<void> {
    try {
      await this.subscriber.ping()
      this.lastPong = Date.now()
    } catch {
      // Not live any more once LIVE_MS pass without an answer; node-redis reconnects.
    }
  }

  private async resubscribed(): Promise<void> {
    // node-redis sends SUBSCRIBE again as the connection comes back; the PING's answer comes after its
    // confirmation. Then what was sent while the connection was away is dropped, and the feed is live.
    try {
      await this.subscriber.ping()
    } catch {
      return // down again: the next 'ready' tries again
    }
    this.resyncs++
    for (const resync of this.resyncHandlers) resync()
    this.lastPong = Date.now()
    this.subscribed = true
  }
}
