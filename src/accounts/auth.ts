// Who is calling, and may they? Runs before every route (CONTRACT §2-3):
//   1. credentials: a Bearer token or a session cookie; a present but bad one is a 401;
//   2. the gate: any user credential passes it, else X-Master-Password or the gate cookie;
//   3. the route's access level: 'user' and 'staff' routes need a user;
//   4. CSRF for state changes made with a session cookie.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Forbidden, TooManyRequests, Unauthorized } from '../errors.js'
import { isApiRequest } from '../http/request-kind.js'
import type { Access, App } from '../http/types.js'
import { authenticateSession, authenticateToken } from './service.js'
import { clientKey } from './addresses.js'
import type { AttemptKind } from './limiter.js'
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
    if (access === 'gate' && request.headers.authorization === undefined && !request.cookies[SESSION_COOKIE] && !request.cookies[GATE_COOKIE]) {
      const password = request.headers[MASTER_PASSWORD_HEADER]
      const known = typeof password === 'string' ? app.gate.verifyPasswordSync(password) : undefined
      if (known !== undefined) {
        const blocked = app.attemptLimiters.gate.settle(clientKey(request.ip), known)
        if (typeof blocked === 'number') return done(gateHeaderVerdict(request, blocked, known))
        blocked.then((seconds) => done(gateHeaderVerdict(request, seconds, known)), done)
        return
      }
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

/** The gate header's answer, once the limiter has settled it: undefined lets the request through. */
function gateHeaderVerdict(request: FastifyRequest, blockedFor: number, succeeded: boolean): Error | undefined {
  const error = attemptError('gate', blockedFor, succeeded, 'wrong master password')
  if (!error) request.authMethod = 'gate'
  return error
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

/**
 * The gate password (header or form) under the gate's failure limit: counted
 * in one atomic step when the answer needs no scrypt, else through
 * checkPasswordAttempt. Throws 429 for a blocked client (whatever the
 * password: a right one must not answer differently), 401 for a wrong one.
 */
export async function checkGatePassword(app: App, clientAddress: string, password: string, failureDetail: string): Promise<void> {
  let known = await app.gate.verifyPasswordCheaply(password)
  if (known === undefined) {
    const inFlight = app.gate.verificationInFlight(password)
    // The same password is being checked already: its answer is settled like a cheap one (a wrong one counts).
    // If that check never answered (its client was blocked, the pool was busy), this request tries on its own.
    if (inFlight !== undefined) known = await inFlight.catch(() => undefined)
    if (known === undefined) return checkScryptGatePassword(app, clientAddress, password, failureDetail)
  }
  const error = attemptError('gate', await app.attemptLimiters.gate.settle(clientKey(clientAddress), known), known, failureDetail)
  if (error) throw error
}

/**
 * The scrypt check of a gate password, counted first like checkPasswordAttempt;
 * through Gate.verifyAdmitted, so the same password arriving while this
 * client's place is being reserved joins this check instead of taking a place.
 */
async function checkScryptGatePassword(app: App, clientAddress: string, password: string, failureDetail: string): Promise<void> {
  let refund: (() => Promise<void>) | undefined
  let succeeded: boolean
  try {
    succeeded = await app.gate.verifyAdmitted(password, async () => {
      const reservation = await app.attemptLimiters.gate.reserve(clientKey(clientAddress))
      if (!('refund' in reservation)) throw attemptError('gate', reservation.retryAfter, false, failureDetail)!
      refund = () => reservation.refund()
    })
  } catch (error) {
    // The check never answered (blocked, the server was busy): that was no guess.
    await refund?.().catch(() => undefined)
    throw error
  }
  if (!succeeded) throw new Unauthorized(failureDetail)
  await refund?.()
}

/**
 * Runs a password check that costs a scrypt under the failure limit of `kind`,
 * counting first: the attempt is reserved before the check runs (a blocked
 * client gets 429 and no check), kept as a failure when the password was
 * wrong (401), given back when it was right or the check could not run.
 */
export async function checkPasswordAttempt(
  app: App,
  kind: AttemptKind,
  clientAddress: string,
  check: () => Promise<boolean>,
  failureDetail: string,
): Promise<void> {
  const reservation = await app.attemptLimiters[kind].reserve(clientKey(clientAddress))
  if (!('refund' in reservation)) throw attemptError(kind, reservation.retryAfter, false, failureDetail)!
  let succeeded: boolean
  try {
    succeeded = await check()
  } catch (error) {
    // The check never answered (the server was busy, the database failed): that was no guess.
    await reservation.refund().catch(() => undefined)
    throw error
  }
  if (!succeeded) throw new Unauthorized(failureDetail)
  await reservation.refund()
}

const ATTEMPTS_AT: Record<AttemptKind, string> = { gate: 'the site password', login: 'account passwords' }

function attemptError(kind: AttemptKind, blockedFor: number, succeeded: boolean, failureDetail: string): Error | undefined {
  if (blockedFor > 0) {
    return new TooManyRequests(`too many failed attempts at ${ATTEMPTS_AT[kind]} from your address; retry in ${blockedFor} s`, blockedFor)
  }
  return succeeded ? undefined : new Unauthorized(failureDetail)
}
