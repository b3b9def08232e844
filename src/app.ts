// buildApp(config): the whole service as one Fastify instance, without
// listening. `npm start`, the benchmark and every test build it the same way.
// Plugins load in three phases, each named with what it needs:
//   1. infrastructure: 'config' (the settings and the clock), 'assets' (the pages' bundle),
//      'shared-state' (memory or Redis), 'db', 'storage', then Fastify's own (cookies, forms,
//      OpenAPI) and the HTTP plumbing;
//   2. our services: 'gate' (needs db), 'auth' (db, shared-state, gate),
//      'metrics' (db, shared-state, auth), 'downloads' (db, gate), 'signing' (db);
//   3. routes, one encapsulated plugin per resource, so what one registers
//      (the multipart parser of uploads) stays off the others.
import Fastify, { LogController, type FastifyBaseLogger, type FastifyServerOptions } from 'fastify'
import http from 'node:http'
import { pino } from 'pino'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config/index.js'
import { migrateToLatest, openDatabase } from './db/index.js'
import database from './db/plugin.js'
import storage from './storage/plugin.js'
import sharedState from './shared-state/plugin.js'
import type { UpdateCheckCacheLimits } from './update-check/cache.js'
import { Gate } from './auth/gate.js'
import gate from './auth/gate-plugin.js'
import auth from './auth/plugin.js'
import bulkhead from './http/bulkhead.js'
import { PasswordHasher } from './auth/passwords.js'
import metrics from './stats/plugin.js'
import downloads, { type DownloadsOptions } from './downloads/plugin.js'
import signing from './signing/plugin.js'
import syncClient from './sync-client/plugin.js'
import configPlugin from './config/plugin.js'
import assets from './web/plugin.js'
import { sendErrorPage } from './web/respond.js'
import { answerFrameworkError, installErrorHandling } from './http/errors.js'
import { installJsonBodyParser } from './http/json-body.js'
import { installTextInputCheck } from './http/text-input.js'
import { sharedSchemaController } from './http/schema-compilers.js'
import type { App } from './http/types.js'
import { installHostCheck } from './http/host.js'
import { installAccessLog } from './http/access-log.js'
import { LogSink } from './http/log-sink.js'
import { createUpdateCheckFastPath, type FastPath } from './update-check/fast-path.js'
import { installTimeouts, serverOptions } from './http/timeouts.js'
import { startSweeper } from './maintenance/sweep.js'
import { searchSnapshotOf } from './packs/search-memory.js'
import { backfillFiles } from './maintenance/backfill.js'
import { packChanged } from './update-check/service.js'
import healthRoutes, { Readiness, databaseProbe, storageProbe, type Probe } from './http/health.js'
import meRoutes from './accounts/me-routes.js'
import fileRoutes from './files/routes.js'
import uploadRoutes from './uploads/routes.js'
import draftRoutes from './drafts/routes.js'
import publishRoutes from './packs/publish-routes.js'
import autocompleteRoutes from './autocomplete/routes.js'
import packRoutes, { packVersionsRoutes } from './packs/routes.js'
import packEditRoutes from './packs/edit-routes.js'
import updateCheckRoutes from './update-check/routes.js'
import updateCheckBatchRoutes from './update-check/batch-routes.js'
import byHashRoutes from './update-check/by-hash-routes.js'
import signingRoutes from './signing/routes.js'
import syncClientRoutes from './sync-client/routes.js'
import modrinthRoutes from './modrinth/routes.js'
import statsRoutes from './stats/routes.js'
import metricsRoutes from './stats/metrics-routes.js'
import tokenRoutes from './accounts/token-routes.js'
import feedTokenRoutes from './accounts/feed-token-routes.js'
import packModerationRoutes from './moderation/pack-routes.js'
import packManageRoutes from './packs/manage-routes.js'
import teamRoutes from './packs/team-routes.js'
import followRoutes from './packs/follow-routes.js'
import notificationRoutes from './notifications/routes.js'
import accountModerationRoutes from './moderation/account-routes.js'
import auditRoutes from './audit/routes.js'
import profileRoutes from './profiles/routes.js'
import feedRoutes from './feeds/routes.js'
import webhookRoutes from './webhooks/routes.js'
import webhooks, { type WebhooksOptions } from './webhooks/plugin.js'
import { countPending as countPendingDeliveries } from './webhooks/repository.js'
import { countFanouts } from './notifications/repository.js'
import notifications from './notifications/plugin.js'
import schemaRoutes from './http/openapi.js'
import pageRoutes from './pages/index.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** How many update-checks the fast path (src/update-check/fast-path.ts) has answered: tests and diagnostics. */
    fastPathServed(): number
  }
}

export interface BuildOptions {
  /** Fastify's logger option; tests pass false. */
  logger?: FastifyServerOptions['logger']
  /** Run the periodic sweep of expired uploads and drafts (off in tests that drive it by hand). */
  sweep?: boolean
  /** The clock of app.clock (Date.now by default): tests move it past a window instead of waiting for it. */
  clock?: () => number
  /** The update-check cache's bounds (DEFAULT_LIMITS by default): tests set them small and exceed them in a few requests. */
  updateCheckLimits?: Partial<UpdateCheckCacheLimits>
  /** The download counter's bound and write interval (src/downloads/): tests set the bound small and exceed it. */
  downloads?: DownloadsOptions
  /** Where the packs-sync bundle players download is read from (src/sync-client/): tests point it at a file that is not there. */
  syncClientBundle?: string
  /** The webhooks' dispatcher (src/webhooks/plugin.ts): tests shorten its timeout, or drive it by hand. */
  webhooks?: WebhooksOptions
}

const API_VERSION = '1.0.0'

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  // The server's own logger writes in batches (src/http/log-sink.ts): a write per line, what pino does by
  // default, cost each update-check more than the rest of its work.
  const destination = options.logger === undefined ? new LogSink() : undefined
  const logger = destination && pino({
    level: config.logLevel,
    // Credentials never reach the log, whatever a future serializer prints.
    redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-master-password"]', 'res.headers["set-cookie"]'],
  }, destination)
  // The update-check's fast path (src/update-check/fast-path.ts) sees each request before Fastify does; it is
  // set once the app is ready and unset when it starts closing.
  let fastPath: FastPath | undefined
  let fastPathServed = 0
  const server = serverOptions(config)
  const app = Fastify({
    ...(logger ? { loggerInstance: logger as FastifyBaseLogger } : { logger: options.logger }),
    // What Fastify would do without a factory (its lib/server.js), with the fast path in front.
    serverFactory: (handler) => {
      const httpServer = http.createServer(server.http, (request, response) => {
        if (fastPath === undefined || !fastPath(request, response)) handler(request, response)
      })
      httpServer.keepAliveTimeout = server.keepAliveTimeout
      httpServer.requestTimeout = server.requestTimeout
      httpServer.setTimeout(server.connectionTimeout)
      return httpServer
    },
    // One access-log line per request instead of Fastify's two (src/http/access-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
    // Draft autosaves are the largest JSON bodies (256 KiB: docs/decisions.md#request-bodies-and-text).
    bodyLimit: config.draftBodyLimit,
    ajv: { customOptions: { allErrors: false, removeAdditional: false } },
    // Fastify's default compilers, created once per process rather than per app (src/http/schema-compilers.ts).
    schemaController: sharedSchemaController,
    return503OnClosing: true,
    // What the router refuses before any hook runs, in the API's { detail } shape (src/http/errors.ts).
    frameworkErrors: answerFrameworkError,
    forceCloseConnections: 'idle',
    // Opening a backend waits as long as that backend's own timeouts allow (a
    // PostgreSQL connection 10 s, a migration as long as it takes), not
    // Fastify's 10 s per plugin, which would replace its one-line error.
    pluginTimeout: 0,
    // Header, body, idle and keep-alive deadlines (src/http/timeouts.ts).
    ...server,
  }).withTypeProvider<TypeBoxTypeProvider>() as App
  const accessLog = destination && logger && config.accessLog && logger.isLevelEnabled('info') ? destination : undefined
  if (accessLog) installAccessLog(app, accessLog)
  try {
    await registerAll(app, config, options)
    app.addHook('onReady', (done) => {
      fastPath = createUpdateCheckFastPath({
        config, gate: app.gate, limiter: app.attemptLimiters.gate, cache: app.updateCheckCache, signing: app.signing,
        metrics: app.metrics, securityHeaders: staticSecurityHeaders(config), accessLog,
      })
      done()
    })
    app.addHook('preClose', (done) => {
      fastPathServed = fastPath?.served() ?? fastPathServed
      fastPath = undefined
      done()
    })
    app.decorate('fastPathServed', () => fastPath?.served() ?? fastPathServed)
  } catch (error) {
    // What had opened (the Redis connection, the database, the store) closes
    // again: a failed start must leave nothing that keeps the process alive.
    await app.close().catch(() => {})
    throw error
  }
  return app
}

async function registerAll(app: App, config: Config, options: BuildOptions): Promise<void> {
  await app.register(configPlugin, { config, clock: options.clock })
  await app.register(assets)
  installErrorHandling(app, (request, reply, status, detail) => sendErrorPage(app, request, reply, status, detail))

  // Phase 1: infrastructure. The backends come first: a bad REDIS_URL,
  // DATABASE_URL or STORAGE_URL fails here, in one line, before anything listens.
  // Where what instances share lives (memory, or Redis with REDIS_URL): decided once, in src/shared-state/plugin.ts.
  await app.register(sharedState, { updateCheckLimits: options.updateCheckLimits })
  await app.register(database)
  await app.register(storage)
  // Before any route's plugin scope exists, so every scope inherits it.
  installJsonBodyParser(app)
  // Cookies are parsed by the auth hook, only when a request has any (most API calls have none).
  await app.register(cookie, { hook: false })
  await app.register(formbody)
  // Not @fastify/helmet: its per-request hooks halved the throughput of a bare
  // route (measured 30.5k vs 58.6k req/s). The headers every response needs are
  // static, so they are set from one precomputed object; pages add their own CSP.
  const securityHeaders = staticSecurityHeaders(config)
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(securityHeaders)
    done()
  })
  installHostCheck(app)
  installTimeouts(app)
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Packs',
        version: API_VERSION,
        description: 'Hosting of Minecraft data packs and resource packs: files, uploads, drafts, autocomplete, update-check and statistics.',
      },
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'apiKey',
            in: 'header',
            name: 'Authorization',
            description: 'Bearer <username> <token>. Every request also needs the site gate: this header, X-Master-Password, or the gate cookie.',
          },
        },
      },
    },
  })
  await app.register(swaggerUi, { routePrefix: '/api/docs', staticCSP: true })

  // Phase 2: our services, and their hooks on every route.
  await app.register(gate)
  await app.register(auth)
  // Heavy reads (config.heavy) take turns, so they never crowd out the update-check (src/http/bulkhead.ts).
  await app.register(bulkhead)
  installTextInputCheck(app)
  // What /readyz checks and /metrics reports as the backends' health: each backend this site runs on.
  const probes: Probe[] = [databaseProbe(app.db), storageProbe(app.store)]
  const ping = app.sharedStatePing
  if (ping !== null) probes.push({ name: 'redis', check: ping })
  const readiness = new Readiness(probes)
  // Per-route request metrics, the event-loop monitor, app.statsSnapshot() and /metrics' figures (src/stats/plugin.ts).
  await app.register(metrics, {
    readiness,
    updateCheck: () => {
      const cache = app.updateCheckCache
      const usage = cache.usage()
      return { fastPathHits: app.fastPathServed(), hits: cache.counts.hits, misses: cache.counts.misses, answers: usage.answers, bytes: usage.bytes }
    },
    queues: { webhook_deliveries: countPendingDeliveries, notification_fanouts: countFanouts },
  })
  // Archive downloads, counted in memory and written in batches (src/downloads/plugin.ts).
  await app.register(downloads, options.downloads ?? {})
  // The Ed25519 key that signs update-check answers, made on the first start (src/signing/).
  await app.register(signing)
  // The packs-sync bundle the site serves its players, read once (src/sync-client/); a site without it still starts.
  await app.register(syncClient, { file: options.syncClientBundle })
  // Sends the webhooks' deliveries from the outbox, on every instance (src/webhooks/dispatcher.ts).
  await app.register(webhooks, options.webhooks ?? {})
  // Writes followers' notifications from what changes leave, a batch at a time (src/notifications/fanout.ts).
  await app.register(notifications)

  // Phase 3: routes, one file per resource.
  await app.register(healthRoutes, { readiness })
  await app.register(metricsRoutes)
  await app.register(meRoutes)
  await app.register(schemaRoutes)
  await app.register(fileRoutes)
  await app.register(uploadRoutes)
  await app.register(draftRoutes)
  await app.register(publishRoutes)
  await app.register(autocompleteRoutes)
  await app.register(packRoutes)
  await app.register(packEditRoutes)
  await app.register(updateCheckRoutes)
  await app.register(updateCheckBatchRoutes)
  await app.register(byHashRoutes)
  await app.register(signingRoutes)
  await app.register(syncClientRoutes)
  await app.register(modrinthRoutes)
  await app.register(packVersionsRoutes)
  await app.register(statsRoutes)
  await app.register(tokenRoutes)
  await app.register(feedTokenRoutes)
  await app.register(packManageRoutes)
  await app.register(teamRoutes)
  await app.register(followRoutes)
  await app.register(notificationRoutes)
  await app.register(packModerationRoutes)
  await app.register(accountModerationRoutes)
  await app.register(auditRoutes)
  await app.register(profileRoutes)
  await app.register(webhookRoutes)
  await app.register(feedRoutes)
  await app.register(pageRoutes)

  // Search's in-memory copy of the index loads in the background once the server listens (SQL answers
  // searches until it has: docs/site.md#search).
  app.addHook('onListen', () => {
    const snapshot = searchSnapshotOf(app.db)
    const started = performance.now()
    snapshot.loaded(app.db).then(
      () => app.log.info({ packs: snapshot.size, ms: Math.round(performance.now() - started) }, 'search index loaded into memory'),
      (error: unknown) => { if (!closing) app.log.warn({ err: error }, 'search index could not be loaded into memory; SQL answers searches') },
    )
  })
  // Before the database closes (onClose hooks run last-registered first): a load under way stops there.
  let closing = false
  app.addHook('onClose', () => {
    closing = true
    searchSnapshotOf(app.db).close()
  })

  if (options.sweep !== false) {
    const sweeper = startSweeper({
      db: app.db, store: app.store, draftTtlMs: config.draftTtlMs, intervalMs: config.sweepIntervalMs, orphanGraceMs: config.orphanGraceMs, log: app.log, now: app.clock,
    })
    // The start-up consistency check (what a crash left behind) runs in the
    // background once the server listens: a huge store must not delay start-up.
    app.addHook('onListen', () => { void sweeper.runNow('start-up') })
    // Files stored before SHA-1s were kept get theirs (and old archives their declaration), once, in the background.
    app.addHook('onListen', () => {
      const changed = (namespace: string, packId: string) => packChanged(app.updateCheckCache, namespace, packId)
      void backfillFiles(app.db, app.store, changed, app.log).catch((error: unknown) => app.log.warn({ err: error }, 'back-fill of file hashes stopped'))
    })
    // onClose hooks run last-registered first: the sweep stops before the store and the database close.
    app.addHook('onClose', () => sweeper.stop())
  }
}

/**
 * Headers for every response. JSON needs only nosniff and no-store; the headers that guard
 * documents (framing, referrer, opener) go on pages (src/web/html.ts), and
 * files carry their own sandbox (files/routes.ts).
 */
function staticSecurityHeaders(config: Config): Record<string, string> {
  const headers: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    // Stored by no cache unless a route says otherwise (update-check, files, assets do). Answers carry CSRF
    // tokens, new API tokens, drafts; and nearly all sit behind the gate, whose password travels in a header
    // or cookie that shared caches do not treat as credentials (RFC 9111 §3.5 covers only Authorization).
    'cache-control': 'no-store',
  }
  // HSTS only means something over HTTPS; a plain-HTTP deployment must not advertise it.
  if (config.baseUrl?.startsWith('https:')) headers['strict-transport-security'] = 'max-age=31536000'
  return headers
}

/**
 * What must happen once per site before several workers start (WEB_CONCURRENCY):
 * migrations, and the generated gate password, so workers do not race on them
 * and the password is printed once. Returns the generated password, if any.
 */
export async function prepareSite(config: Config): Promise<string | null> {
  const db = await openDatabase(config.databaseUrl)
  try {
    await migrateToLatest(db)
    const gate = await Gate.open(db, config.masterPassword, new PasswordHasher(config.passwordHashCost))
    return await gate.ensurePassword()
  } finally {
    await db.destroy()
  }
}
