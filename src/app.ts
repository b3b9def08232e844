// buildApp(config): the whole service as one Fastify instance, without
// listening. `npm start`, the benchmark and every test build it the same way.
// Plugins load in three phases: infrastructure, our services and the auth
// hook, then routes.
import Fastify, { type FastifyServerOptions } from 'fastify'
import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config/index.js'
import { migrateToLatest, openDatabase } from './db/index.js'
import { openFileStore, type FileStore } from './storage/index.js'
import { Gate } from './accounts/gate.js'
import { MemoryAttemptLimiter, type AttemptKind, type AttemptLimiter } from './accounts/limiter.js'
import { RedisAttemptLimiter } from './shared-state/redis-limiter.js'
import { openRedis } from './shared-state/redis.js'
import { installAuth } from './accounts/auth.js'
import { RouteMetrics } from './stats/metrics.js'
import { LatestCache, type UpdateCheckCache } from './update-check/cache.js'
import { RedisLatestCache } from './shared-state/redis-update-check-cache.js'
import { RedisSnapshotCache } from './shared-state/redis-snapshot-cache.js'
import { EventLoopMonitor, MemorySnapshotCache, buildSnapshot, type StatsSnapshot } from './stats/service.js'
import { Assets } from './web/assets.js'
import { installErrorHandling, sendError } from './http/errors.js'
import { installJsonBodyParser } from './http/json-body.js'
import { installTextInputCheck } from './http/text-input.js'
import type { App } from './http/types.js'
import { installHostCheck } from './http/host.js'
import { installTimeouts, serverOptions } from './http/timeouts.js'
import { startSweeper } from './maintenance/sweep.js'
import healthRoutes from './http/health.js'
import gateRoutes from './accounts/gate-routes.js'
import fileRoutes from './files/routes.js'
import uploadRoutes from './uploads/routes.js'
import draftRoutes from './drafts/routes.js'
import autocompleteRoutes from './autocomplete/routes.js'
import packRoutes from './packs/routes.js'
import statsRoutes from './stats/routes.js'
import tokenRoutes from './accounts/token-routes.js'
import schemaRoutes from './http/openapi.js'
import assetRoutes from './web/routes.js'
import pageRoutes from './pages/index.js'
import './http/types.js'

export interface BuildOptions {
  /** Fastify's logger option; tests pass false. */
  logger?: FastifyServerOptions['logger']
  /** Run the periodic sweep of expired uploads and drafts (off in tests that drive it by hand). */
  sweep?: boolean
}

export const API_VERSION = '1.0.0'

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<App> {
  // Open the backends first: a bad DATABASE_URL or STORAGE_URL must fail before anything listens.
  // With REDIS_URL, what instances must share lives there (src/shared-state/redis.ts); without it, in this process.
  const redis = config.redisUrl ? await openRedis(config.redisUrl) : null
  const assets = Assets.load()
  const db = openDatabase(config.databaseUrl)
  let store: FileStore | undefined
  try {
    await migrateToLatest(db)
    store = openFileStore(config.storageUrl)
    await store.check?.()
  } catch (error) {
    await store?.close()
    await db.destroy()
    await redis?.close()
    throw error
  }
  const gate = await Gate.open(db, config.masterPassword)
  const generatedMasterPassword = await gate.ensurePassword()

  const app = Fastify({
    logger: options.logger ?? {
      level: config.logLevel,
      // Credentials never reach the log, whatever a future serializer prints.
      redact: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-master-password"]', 'res.headers["set-cookie"]'],
    },
    trustProxy: config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
    // Draft autosaves are the largest JSON bodies (CONTRACT §4: 256 KiB).
    bodyLimit: config.draftBodyLimit,
    ajv: { customOptions: { allErrors: false, removeAdditional: false } },
    return503OnClosing: true,
    // The router rejects an over-long or undecodable path parameter before any
    // hook or error handler runs; answer in the API's { detail } shape too. Such
    // a parameter names nothing that exists (CONTRACT §4: a malformed id is 404).
    frameworkErrors: (error, _request, reply) => {
      const badParam = error.code === 'FST_ERR_MAX_PARAM_LENGTH' || error.code === 'FST_ERR_BAD_URL'
      void sendError(reply, badParam ? 404 : 500, badParam ? 'not found' : 'internal server error')
    },
    forceCloseConnections: 'idle',
    // Header, body, idle and keep-alive deadlines (src/http/timeouts.ts).
    ...serverOptions(config),
  }).withTypeProvider<TypeBoxTypeProvider>() as App

  app.decorate('config', config)
  app.decorate('db', db)
  app.decorate('store', store)
  app.decorate('gate', gate)
  // Gate and account passwords are counted apart: guessing one never locks anyone out of the other.
  const attemptLimiter = (kind: AttemptKind): AttemptLimiter => redis
    ? new RedisAttemptLimiter(redis.client, kind, config.authFailureLimit, config.authFailureWindowMs)
    : new MemoryAttemptLimiter(config.authFailureLimit, config.authFailureWindowMs)
  app.decorate('attemptLimiters', { gate: attemptLimiter('gate'), login: attemptLimiter('login') })
  app.decorate('metrics', new RouteMetrics())
  let latestCache: UpdateCheckCache = new LatestCache()
  if (redis) {
    const shared = new RedisLatestCache(redis.client)
    shared.onWriteFailure = (error) => app.log.error({ err: error }, 'could not tell other instances about a new version yet; retried when Redis is back')
    latestCache = shared
  }
  app.decorate<UpdateCheckCache>('latestCache', latestCache)
  app.decorate('generatedMasterPassword', generatedMasterPassword)
  app.decorate('assets', assets)
  const eventLoop = new EventLoopMonitor()
  const statsCache = redis
    ? new RedisSnapshotCache<StatsSnapshot>(redis.client, config.statsCacheMs)
    : new MemorySnapshotCache<StatsSnapshot>(config.statsCacheMs)
  if (redis) redis.onError = (error) => app.log.warn({ err: error }, 'redis connection error; retrying')
  app.decorate('statsSnapshot', () =>
    statsCache.get(() => buildSnapshot({ db, metrics: app.metrics, eventLoop, cacheMs: config.statsCacheMs })))

  installErrorHandling(app)

  // Phase 1: infrastructure.
  // Before any plugin scope exists, so every scope inherits it.
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

  // Phase 2: our services' cross-cutting hooks.
  installAuth(app)
  installTextInputCheck(app)
  app.addHook('onResponse', (request, reply, done) => {
    app.metrics.record(request.routeKey ?? 'unmatched', reply.elapsedTime, reply.statusCode)
    done()
  })

  // Phase 3: routes, one file per resource.
  await app.register(healthRoutes)
  await app.register(gateRoutes)
  await app.register(schemaRoutes)
  await app.register(fileRoutes)
  await app.register(uploadRoutes)
  await app.register(draftRoutes)
  await app.register(autocompleteRoutes)
  await app.register(packRoutes)
  await app.register(statsRoutes)
  await app.register(tokenRoutes)
  await app.register(assetRoutes)
  await app.register(pageRoutes)

  const sweeper = options.sweep === false
    ? null
    : startSweeper({
      db, store, draftTtlMs: config.draftTtlMs, intervalMs: config.sweepIntervalMs, orphanGraceMs: config.orphanGraceMs, log: app.log,
    })
  // The start-up consistency check (what a crash left behind) runs in the
  // background once the server listens: a huge store must not delay start-up.
  if (sweeper) app.addHook('onListen', () => { void sweeper.runNow('start-up') })
  app.addHook('onClose', async () => {
    await sweeper?.stop()
    eventLoop.stop()
    await store.close()
    await db.destroy()
    await redis?.close()
  })

  return app
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
  const db = openDatabase(config.databaseUrl)
  try {
    await migrateToLatest(db)
    const gate = await Gate.open(db, config.masterPassword)
    return await gate.ensurePassword()
  } finally {
    await db.destroy()
  }
}
