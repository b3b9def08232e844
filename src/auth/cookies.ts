// The two cookies of the site: the session (sign-in, sign-up) and the gate
// cookie (the gate page). HttpOnly and SameSite=Lax; Secure when the site is
// served over HTTPS (PACKS_BASE_URL says so).
import type { FastifyReply } from 'fastify'
import type { App } from '../http/types.js'
import { endSession, startSession } from './sessions.js'

export const SESSION_COOKIE = 'packs_session'
export const GATE_COOKIE = 'packs_gate'
const GATE_COOKIE_MAX_AGE_S = 30 * 86_400

/**
 * Signs the browser in as this user: a new session and its cookie (sign-in
 * and sign-up share it, so both set exactly the same cookie).
 */
export async function startBrowserSession(app: App, reply: FastifyReply, userId: string): Promise<{ token: string; expiresAt: Date }> {
  const session = await startSession(app.db, userId, app.config.sessionTtlMs)
  reply.setCookie(SESSION_COOKIE, session.token, {
    path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(app), expires: session.expiresAt,
  })
  return session
}

/** Signs the browser out: its session ends (if it had a live one) and the cookie goes. */
export async function endBrowserSession(app: App, reply: FastifyReply, sessionToken: string | null): Promise<void> {
  if (sessionToken) await endSession(app.db, sessionToken)
  clearSessionCookie(reply)
}

export function clearSessionCookie(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/' })
}

/** The gate cookie, bound to the current gate password (Gate.cookieValue). */
export async function setGateCookie(app: App, reply: FastifyReply): Promise<void> {
  reply.setCookie(GATE_COOKIE, await app.gate.cookieValue(), {
    path: '/', httpOnly: true, sameSite: 'lax', secure: secureCookies(app), maxAge: GATE_COOKIE_MAX_AGE_S,
  })
}

function secureCookies(app: App): boolean {
  return app.config.baseUrl?.startsWith('https:') ?? false
}
