// The 'auth' plugin: who is calling, and may they? Runs before every route
// (docs/decisions.md#the-gate, #authentication):
//   1. credentials: a Bearer token or a session cookie, and on the feeds alone a feed token in the query;
//      a present but bad one is a 401;
//   2. the gate: any user credential passes it, else X-Master-Password or the gate cookie;
//   3. the route's access level: 'user' and 'staff' routes need a user; a
//      token's reach (read-only, publish-only) may refuse the request (403);
//   4. CSRF for state changes made with a session cookie.
// It reads app.db, app.gate and app.attemptLimiters, and decorates each request
// with user, authMethod, sessionToken, csrfToken and routeKey.
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { FEED_TOKEN_PARAM } from '../api/notifications.js'
import { Forbidden, Unauthorized } from '../errors.js'
import { isApiRequest, wantsPage } from '../http/request-kind.js'
import type { App } from '../http/types.js'
import type { User } from './user.js'
import { clientKey } from './addresses.js'
import { attemptError, checkGatePassword } from './attempts.js'
import { GATE_COOKIE, SESSION_COOKIE, clearSessionCookie } from './cookies.js'
import { CSRF_FIELD, CSRF_HEADER, csrfTokenFor } from './csrf.js'
import { authenticateFeedToken } from './feed-tokens.js'
import { safeEqual } from './secrets.js'
import { authenticateSession } from './sessions.js'
import { reachRefusal, type TokenReach } from './token-reach.js'
import { authenticateToken } from './tokens.js'

/**
 * Who may call a route. The gate denies by default: a route without `access`
 * is 'gate'. Only /healthz, /readyz, /metrics (which checks its own scrape token) and the gate page are 'public'.
 */
export type Access = 'public' | 'gate' | 'user' | 'staff'

type AuthMethod = 'token' | 'session' | 'gate' | 'feed'

declare module 'fastify' {
  interface FastifyRequest {
    user: User | null
    authMethod: AuthMethod | null
    /** The raw session token when the caller came in with a session cookie. */
    sessionToken: string | null
    /** The session's CSRF token (derived when read); null without a session. */
    csrfToken: string | null
    /** "METHOD /route/pattern" for the statistics; read once, as request.routeOptions builds a new object per read. */
    routeKey: string | null
    /** The reach of the API token the caller came with (./token-reach.ts); null for a session or the gate. */
    tokenReach: TokenReach | null
  }
  /** What a route's `config` tells this plugin. */
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
    /**
     * Also accept a feed token in the query (`?feed_token=`): the feeds alone (src/feeds/routes.ts). Feed
     * readers cannot send headers; everywhere else the parameter means nothing, so a feed address that leaks
     * opens the feeds and nothing more.
     */
    feedToken?: boolean
  }
}

const MASTER_PASSWORD_HEADER = 'x-master-password'
const BEARER = /^Bearer ([^\s]+) ([^\s]+)$/
/** Modrinth's way (routes with config.bareToken): the token alone, perhaps after "Bearer ". */
const BARE_TOKEN = /^(?:Bearer )?([^\s]+)$/
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

async function auth(app: App): Promise<void> {
  app.decorateRequest('user', null)
  app.decorateRequest('authMethod', null)
  app.decorateRequest('sessionToken', null)
  app.decorateRequest('routeKey', null)
  app.decorateRequest('tokenReach', null)
  // Derived when read (a page's forms, /api/me/), not on every session request.
  app.decorateRequest('csrfToken', {
    getter(this: FastifyRequest): string | null {
      return this.sessionToken ? csrfTokenFor(app.gate.siteSecret, this.sessionToken) : null
    },
  })

  // Behind a reverse proxy that PACKS_TRUST_PROXY does not name, every client
  // has the proxy's address: one guesser then blocks all of them. Said once;
  // afterwards this costs one boolean test per request.
  let watchForwarded = app.config.trustProxy === false

  // Callback-style hooks with synchronous fast paths: the update-check runs
  // through here on every game start, and each async hook costs a promise and
  // a microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    if (watchForwarded && request.headers['x-forwarded-for'] !== undefined) {
      watchForwarded = false
      app.log.warn({ remoteAddress: request.ip },
        'a request carries X-Forwarded-For but PACKS_TRUST_PROXY is not set: if a reverse proxy is in front, every client '
        + 'has its address, and a few wrong passwords lock all of them out; set PACKS_TRUST_PROXY to the proxy\'s addresses (e.g. 127.0.0.1)')
    }
    const cookieHeader = request.headers.cookie
    request.cookies = cookieHeader ? app.parseCookie(cookieHeader) : {}
    const { config, url } = request.routeOptions
    request.routeKey = url ? `${request.method} ${url}` : null
    const access = config?.access ?? 'gate'
    if (access === 'public') return done()
    // The player's mod: the gate header alone on a gate-level route, decided without waiting on anything.
    if (access === 'gate' && request.headers.authorization === undefined && !request.cookies[SESSION_COOKIE] && !request.cookies[GATE_COOKIE]
      && config?.feedToken !== true) {
      const password = request.headers[MASTER_PASSWORD_HEADER]
      const known = typeof password === 'string' ? app.gate.verifyPasswordSync(password) : undefined
      if (known !== undefined) {
        const key = clientKey(request.ip)
        // The right password from a client with no counted failure: nothing to ask (with Redis, while its feed is live).
        if (known && app.attemptLimiters.gate.blockedNow?.(key) === 0) {
          request.authMethod = 'gate'
          return done()
        }
        const blocked = app.attemptLimiters.gate.settle(key, known)
        if (typeof blocked === 'number') return done(gateHeaderVerdict(request, blocked, known))
        blocked.then((seconds) => done(gateHeaderVerdict(request, seconds, known)), done)
        return
      }
    }
    authorize(app, request, reply, access).then(() => done(), done)
  })

  app.addHook('preHandler', (request, _reply, done) => {
    const config = request.routeOptions.config
    if (request.authMethod !== 'session' || SAFE_METHODS.has(request.method) || config?.csrfExempt || config?.query) return done()
    const body = request.body as Record<string, unknown> | undefined
    const sent = request.headers[CSRF_HEADER] ?? (typeof body?.[CSRF_FIELD] === 'string' ? body[CSRF_FIELD] : undefined)
    if (typeof sent !== 'string' || !safeEqual(sent, request.csrfToken!)) {
      return done(new Forbidden(`CSRF token missing or invalid: send it in the ${CSRF_HEADER} header or the ${CSRF_FIELD} form field`))
    }
    done()
  })
}

export default fp(auth, { name: 'auth', dependencies: ['db', 'shared-state', 'gate'], decorators: { fastify: ['config', 'parseCookie'] } })

async function authorize(app: App, request: FastifyRequest, reply: FastifyReply, access: Access): Promise<void> {
  await identify(app, request, reply)
  if (!request.user && !(await passGate(app, request))) {
    if (isApiRequest(request)) {
      throw new Unauthorized('this site is behind a master password: send X-Master-Password, or authenticate')
    }
    // A feed reader cannot pass the gate page; only a browser is sent there.
    if (request.routeOptions.config?.feedToken && !wantsPage(request)) {
      throw new Unauthorized(`this feed needs its address with ?${FEED_TOKEN_PARAM}= (Settings → Feeds), or a browser past the gate`)
    }
    return void reply.redirect(`/gate/?next=${encodeURIComponent(request.url)}`, 303)
  }
  if ((access === 'user' || access === 'staff') && !request.user) {
    // A page that needs an account sends the browser to sign in and come back.
    if (!isApiRequest(request) && SAFE_METHODS.has(request.method)) {
      return void reply.redirect(`/login/?next=${encodeURIComponent(request.url)}`, 303)
    }
    throw new Unauthorized('authentication required: send Authorization: Bearer <username> <token>, or sign in')
  }
  if (access === 'staff' && !request.user!.isStaff) throw new Forbidden('staff only')
}

/** The gate header's answer, once the limiter has settled it: undefined lets the request through. */
function gateHeaderVerdict(request: FastifyRequest, blockedFor: number, succeeded: boolean): Error | undefined {
  const error = attemptError('gate', blockedFor, succeeded, 'wrong master password')
  if (!error) request.authMethod = 'gate'
  return error
}

async function identify(app: App, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const authorization = request.headers.authorization
  if (authorization !== undefined) {
    const config = request.routeOptions.config
    const match = BEARER.exec(authorization)
    const bare = match || !config?.bareToken ? null : BARE_TOKEN.exec(authorization)
    if (!match && !bare) throw new Unauthorized('malformed Authorization header: expected "Bearer <username> <token>"')
    const token = match ? await authenticateToken(app.db, match[1]!, match[2]!) : await authenticateToken(app.db, null, bare![1]!)
    if (!token) throw new Unauthorized('invalid, revoked or expired token')
    // The token's reach (src/auth/token-reach.ts), decided here once, before any route runs.
    const refusal = reachRefusal(token.reach, request.method, request.routeOptions.url, request.params, config?.query === true)
    if (refusal !== undefined) throw new Forbidden(refusal)
    request.user = token.user
    request.authMethod = 'token'
    request.tokenReach = token.reach
    return
  }
  if (request.routeOptions.config?.feedToken) {
    const query = request.query as Record<string, unknown> | undefined
    if (query?.[FEED_TOKEN_PARAM] !== undefined) return identifyByFeedToken(app, request, query[FEED_TOKEN_PARAM])
  }
  const sessionToken = request.cookies[SESSION_COOKIE]
  if (sessionToken) {
    const user = await authenticateSession(app.db, sessionToken)
    if (user) {
      request.user = user
      request.authMethod = 'session'
      request.sessionToken = sessionToken
      return
    }
    // A page visit with a stale cookie just drops it; an API call is told.
    if (isApiRequest(request)) throw new Unauthorized('session expired or invalid: sign in again')
    clearSessionCookie(reply)
  }
}

/**
 * A feed token from the query (routes with config.feedToken). Wrong ones are counted like wrong passwords, under
 * a limit of their own (./limiter.ts), and a blocked client gets 429 even for a right one, so the answer never
 * tells a guesser which guess was right. The token is taken only as written in the address itself: the access
 * log hides `feed_token=<value>`, and a spelling the query parser would decode too (feed%5Ftoken, %70kf_) could
 * slip past that.
 */
async function identifyByFeedToken(app: App, request: FastifyRequest, sent: unknown): Promise<void> {
  const found = typeof sent === 'string' && request.url.includes(`${FEED_TOKEN_PARAM}=${sent}`)
    ? await authenticateFeedToken(app.db, sent, app.clock())
    : undefined
  // A real token of a disabled account is no guess: its holder learns why it stopped working.
  if (found === 'disabled') throw new Unauthorized('this account has been disabled by staff; its feed token does not work while it is')
  const key = clientKey(request.ip)
  const limiter = app.attemptLimiters.feed
  const blocked = found !== undefined && limiter.blockedNow?.(key) === 0 ? 0 : await limiter.settle(key, found !== undefined)
  const error = attemptError('feed', blocked, found !== undefined, 'invalid or revoked feed token: copy the feed address again from Settings → Feeds')
  if (error) throw error
  request.user = found!
  request.authMethod = 'feed'
}

async function passGate(app: App, request: FastifyRequest): Promise<boolean> {
  // The cookie first: a valid one is not a guess, and nobody's failures may hold it up.
  const cookie = request.cookies[GATE_COOKIE]
  if (cookie && (await app.gate.verifyCookie(cookie))) {
    request.authMethod = 'gate'
    return true
  }
  const password = request.headers[MASTER_PASSWORD_HEADER]
  if (typeof password === 'string') {
    await checkGatePassword(app, request.ip, password, 'wrong master password')
    request.authMethod = 'gate'
    return true
  }
  return false
}
