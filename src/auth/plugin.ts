// Who is calling, and may they? Runs before every route (CONTRACT §2-3):
//   1. credentials: a Bearer token or a session cookie; a present but bad one is a 401;
//   2. the gate: any user credential passes it, else X-Master-Password or the gate cookie;
//   3. the route's access level: 'user' and 'staff' routes need a user;
//   4. CSRF for state changes made with a session cookie.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Forbidden, TooManyRequests, Unauthorized } from '../domain/errors.js'
import { isApiRequest } from '../http/request-kind.js'
import type { Access, App } from '../http/types.js'
import { authenticateSession, authenticateToken } from './accounts.js'
import { hmacHex, safeEqual, sha256Hex } from './secrets.js'

export const SESSION_COOKIE = 'packs_session'
export const GATE_COOKIE = 'packs_gate'
export const MASTER_PASSWORD_HEADER = 'x-master-password'
export const CSRF_HEADER = 'x-csrf-token'
export const CSRF_FIELD = 'csrf_token'

const BEARER = /^Bearer ([^\s]+) ([^\s]+)$/
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export function installAuth(app: App): void {
  app.decorateRequest('user', null)
  app.decorateRequest('authMethod', null)
  app.decorateRequest('sessionToken', null)
  app.decorateRequest('routeKey', null)

  // Callback-style hooks with synchronous fast paths: the update-check runs
  // through here on every game start, and each async hook costs a promise and
  // a microtask per request.
  app.addHook('onRequest', (request, reply, done) => {
    const cookieHeader = request.headers.cookie
    request.cookies = cookieHeader ? app.parseCookie(cookieHeader) : {}
    const { config, url } = request.routeOptions
    request.routeKey = url ? `${request.method} ${url}` : null
    const access = config?.access ?? 'gate'
    if (access === 'public') return done()
    // The player's mod: the gate header alone on a gate-level route, decided without waiting on anything.
    if (access === 'gate' && request.headers.authorization === undefined && !request.cookies[SESSION_COOKIE]
      && passGateSync(app, request) === true) {
      return done()
    }
    authorize(app, request, reply, access).then(() => done(), done)
  })

  app.addHook('preHandler', (request, _reply, done) => {
    if (request.authMethod !== 'session' || SAFE_METHODS.has(request.method) || request.routeOptions.config?.csrfExempt) return done()
    const body = request.body as Record<string, unknown> | undefined
    const sent = request.headers[CSRF_HEADER] ?? (typeof body?.[CSRF_FIELD] === 'string' ? body[CSRF_FIELD] : undefined)
    if (typeof sent !== 'string' || !safeEqual(sent, csrfTokenFor(app.gate.siteSecret, request.sessionToken!))) {
      return done(new Forbidden(`CSRF token missing or invalid: send it in the ${CSRF_HEADER} header or the ${CSRF_FIELD} form field`))
    }
    done()
  })
}

async function authorize(app: App, request: FastifyRequest, reply: FastifyReply, access: Access): Promise<void> {
  await identify(app, request, reply)
  if (!request.user && !(await passGate(app, request))) {
    if (isApiRequest(request)) {
      throw new Unauthorized('this site is behind a master password: send X-Master-Password, or authenticate')
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

/**
 * true when X-Master-Password is right and the address is not blocked, and
 * both were known without I/O; undefined means "take the full path" (which
 * also answers every failure, so failures are counted in one place).
 */
function passGateSync(app: App, request: FastifyRequest): true | undefined {
  const password = request.headers[MASTER_PASSWORD_HEADER]
  if (typeof password !== 'string') return undefined
  const retryAfter = app.attemptLimiter.retryAfter(request.ip)
  if (retryAfter !== 0) return undefined
  if (app.gate.verifyPasswordSync(password) !== true) return undefined
  request.authMethod = 'gate'
  return true
}

/** The CSRF token of a session: derived, not stored, so every instance can check it. */
export function csrfTokenFor(siteSecret: string, sessionToken: string): string {
  return hmacHex(siteSecret, `csrf|${sha256Hex(sessionToken)}`)
}

async function identify(app: App, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const authorization = request.headers.authorization
  if (authorization !== undefined) {
    const match = BEARER.exec(authorization)
    if (!match) throw new Unauthorized('malformed Authorization header: expected "Bearer <username> <token>"')
    const user = await authenticateToken(app.db, match[1]!, match[2]!)
    if (!user) throw new Unauthorized('invalid, revoked or expired token')
    request.user = user
    request.authMethod = 'token'
    return
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
    reply.clearCookie(SESSION_COOKIE, { path: '/' })
  }
}

async function passGate(app: App, request: FastifyRequest): Promise<boolean> {
  const password = request.headers[MASTER_PASSWORD_HEADER]
  if (typeof password === 'string') {
    await checkPasswordAttempt(app, request.ip, () => app.gate.verifyPassword(password), 'wrong master password')
    request.authMethod = 'gate'
    return true
  }
  const cookie = request.cookies[GATE_COOKIE]
  if (cookie && (await app.gate.verifyCookie(cookie))) {
    request.authMethod = 'gate'
    return true
  }
  return false
}

/**
 * Runs a password check under the per-address failure limit: a blocked address
 * gets 429 without the check running; a failure is counted and answered 401.
 */
export async function checkPasswordAttempt(
  app: App,
  clientAddress: string,
  check: () => Promise<boolean>,
  failureDetail: string,
): Promise<void> {
  const retryAfter = await app.attemptLimiter.retryAfter(clientAddress)
  if (retryAfter > 0) throw new TooManyRequests(`too many failed attempts; retry in ${retryAfter} s`, retryAfter)
  if (await check()) return
  await app.attemptLimiter.recordFailure(clientAddress)
  throw new Unauthorized(failureDetail)
}
