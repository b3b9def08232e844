// What the app adds to Fastify's types: its services on the instance, the
// caller on the request, and the access level in each route's config.
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from '../config/index.js'
import type { Db } from '../db/index.js'
import type { User } from '../accounts/users-repository.js'
import type { FileStore } from '../storage/index.js'
import type { Gate } from '../accounts/gate.js'
import type { PasswordHasher } from '../accounts/passwords.js'
import type { AttemptKind, AttemptLimiter } from '../accounts/limiter.js'
import type { RouteMetrics } from '../stats/metrics.js'
import type { UpdateCheckCache } from '../update-check/cache.js'
import type { SnapshotCache } from '../stats/cache.js'
import type { StatsSnapshotBody } from '../api/stats.js'
import type { Assets } from '../web/assets.js'
import type { DownloadCounter } from '../downloads/counter.js'
import type { Signer } from '../signing/service.js'

/**
 * Who may call a route. The gate denies by default: a route without `access`
 * is 'gate'. Only /healthz and the gate page are 'public'.
 */
export type Access = 'public' | 'gate' | 'user' | 'staff'

type AuthMethod = 'token' | 'session' | 'gate'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    /** The time the statistics cache and the sweep measure their windows on: Date.now, or a test's own clock (BuildOptions.clock). */
    clock(): number
    db: Db
    store: FileStore
    gate: Gate
    /** Password hashing at the configured cost (PACKS_PASSWORD_HASH_COST); the gate and the account services share it. */
    passwords: PasswordHasher
    /** Failed-password counts per client: the gate password's and account passwords' (sign-in, password change) apart. */
    attemptLimiters: Record<AttemptKind, AttemptLimiter>
    metrics: RouteMetrics
    /** The update-check's answers (src/update-check/cache.ts), in this process or kept in step through Redis. */
    updateCheckCache: UpdateCheckCache
    /** The client bundle the pages link to. */
    assets: Assets
    /** The statistics snapshot, built at most once per PACKS_STATS_CACHE window (the API and the staff page share it). */
    statsSnapshot(): Promise<StatsSnapshotBody>
    /** Where the statistics snapshot is kept between builds: this process, or Redis (src/shared-state/plugin.ts). */
    statsSnapshotCache: SnapshotCache<StatsSnapshotBody>
    /** Whether an error means the shared state (Redis) cannot answer now: a 503, not a 500. Always false without REDIS_URL. */
    sharedStateUnavailable(error: unknown): boolean
    /** Archive downloads counted once per client address, version and UTC day, written in batches (src/downloads/). */
    downloads: DownloadCounter
    /** Signs update-check answers with the site's Ed25519 key (src/signing/). */
    signing: Signer
    /** Set when this start generated the gate password, so the entry point can print it once. */
    generatedMasterPassword: string | null
    /** How many update-checks the fast path (src/update-check/fast-path.ts) has answered: tests and diagnostics. */
    fastPathServed(): number
  }
  interface FastifyRequest {
    user: User | null
    authMethod: AuthMethod | null
    /** The raw session token when the caller came in with a session cookie. */
    sessionToken: string | null
    /** The session's CSRF token (derived when read); null without a session. */
    csrfToken: string | null
    /** "METHOD /route/pattern" for the statistics; read once, as request.routeOptions builds a new object per read. */
    routeKey: string | null
  }
  interface FastifyContextConfig {
    access?: Access
    /** Session-authenticated POST/DELETE need a CSRF token unless the route opts out (login, gate). */
    csrfExempt?: boolean
    /**
     * A POST that only reads (the batch lookups, whose lists do not fit in a URL): like a GET, it needs
     * no CSRF token and a read-only token may call it.
     */
    query?: boolean
    /** Also accept an API token Modrinth's way, `Authorization: <token>` (src/modrinth/). */
    bareToken?: boolean
  }
}

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>
