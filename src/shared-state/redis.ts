// The Redis connection behind REDIS_URL: what several instances must share
// (failed-attempt counts, the statistics snapshot, the update-check's
// invalidations) lives there. Without REDIS_URL nothing here is loaded: only
// the 'shared-state' plugin (./plugin.ts) imports this module and its Redis
// adapters, dynamically, and only when REDIS_URL is set
// (test/e2e/optional-backends.test.ts checks it).
//
// Client: node-redis (the `redis` package), not ioredis: it is the client Redis
// itself maintains (ioredis's README points new projects to it), it ships its
// own TypeScript types for every command, and it pipelines commands issued in
// the same tick on one connection by itself, which is what the update-check's
// per-request check relies on under load.
import {
  ClientClosedError,
  ClientOfflineError,
  ConnectionTimeoutError,
  DisconnectsClientError,
  ErrorReply,
  ReconnectStrategyError,
  SocketClosedUnexpectedlyError,
  SocketTimeoutError,
  TimeoutError,
  createClient,
} from 'redis'
import { ConfigError, redactUrl } from '../config/index.js'

export type RedisClient = ReturnType<typeof createClient>

/** Every key this service writes starts with this, so a Redis shared with other software stays readable. */
export const KEY_PREFIX = 'packs:'

export interface RedisConnection {
  client: RedisClient
  /** Where errors after start-up go (a lost connection is retried; the app points this at its logger). */
  onError: (error: Error) => void
  close(): Promise<void>
}

/**
 * Connects before anything else starts; an unreachable or malformed REDIS_URL
 * is a ConfigError, like a bad DATABASE_URL.
 */
export async function openRedis(url: string): Promise<RedisConnection> {
  if (!/^rediss?:\/\/./.test(url)) {
    throw new ConfigError(`REDIS_URL: "${redactUrl(url)}" must be redis://[user:password@]host[:port][/db] or rediss://...`)
  }
  let started = false
  let client: RedisClient
  try {
    client = createClient({
      url,
      // A command while the connection is down fails at once (the request gets a 503,
      // see redisUnavailable) rather than waiting in a queue for a Redis that may never come back.
      disableOfflineQueue: true,
      socket: {
        connectTimeout: 5000,
        // At start-up the first failure is final (the ConfigError below); once
        // running, a lost connection is retried with a capped back-off.
        reconnectStrategy: (retries, cause) => started ? Math.min(100 * (retries + 1), 2000) : cause,
      },
    })
  } catch (error) {
    throw new ConfigError(`REDIS_URL: "${redactUrl(url)}" is not a valid Redis URL: ${oneLine(error)}`)
  }
  const connection: RedisConnection = {
    client,
    onError: (error) => console.error(`packs: redis: ${oneLine(error)}`),
    async close() {
      if (client.isOpen) await client.close()
    },
  }
  // Without a listener an 'error' event would crash the process; before start-up
  // the failure is reported by connect() itself.
  client.on('error', (error: Error) => {
    if (started) connection.onError(error)
  })
  try {
    await client.connect()
  } catch (error) {
    // A refused first connection has closed the client already.
    if (client.isOpen) client.destroy()
    throw new ConfigError(`REDIS_URL: cannot connect to ${redactUrl(url)}: ${oneLine(error)}`)
  }
  started = true
  return connection
}

// Replies of a Redis that is up but cannot serve yet: loading its data, a
// script running too long, a replica without its primary, a failover.
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|READONLY)\b/

/**
 * Whether an error from the client means "Redis cannot answer now" (the
 * connection is down or being retried, or Redis itself is not ready), as
 * opposed to a wrong command. Requests that need Redis then get a 503 from
 * the error handler; nothing falls back to this process's memory, where an
 * answer could be stale (an update-check missing a publish made through
 * another instance) or a limit uncounted.
 */
export function redisUnavailable(error: unknown): boolean {
  if (error instanceof ErrorReply) return TRANSIENT_REPLY.test(error.message)
  return error instanceof ClientOfflineError
    || error instanceof ClientClosedError
    || error instanceof SocketClosedUnexpectedlyError
    || error instanceof ConnectionTimeoutError
    || error instanceof SocketTimeoutError
    || error instanceof ReconnectStrategyError
    || error instanceof DisconnectsClientError
    || error instanceof TimeoutError
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n')[0]!.trim() || 'unknown error'
}
