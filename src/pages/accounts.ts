// Account pages: sign in and out, sign up (docs/decisions.md#usernames, #sessions-and-csrf)
// and change password. Forms that work without scripts; sign-in and sign-out
// also answer JSON to a script that posts JSON.
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { endBrowserSession, startBrowserSession } from '../auth/cookies.js'
import { csrfTokenFor } from '../auth/csrf.js'
import { signIn } from '../accounts/sessions-service.js'
import { validateUsername } from '../accounts/usernames.js'
import { MIN_PASSWORD_LENGTH, changeOwnPassword, checkNewPassword, createUser } from '../accounts/users-service.js'
import { BadRequest, Conflict } from '../errors.js'
import type { App } from '../http/types.js'
import { safeNext } from '../http/urls.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'
import { sendPage } from '../web/respond.js'
import { formFailure, wantsJson } from './forms.js'

const LoginForm = Type.Object({ username: Type.String(), password: Type.String(), next: Type.Optional(Type.String()) })
// Fields are optional in the schema so a hand-made or truncated post gets the
// form back with a message instead of a bare validation error.
const SignupForm = Type.Object({
  username: Type.Optional(Type.String()),
  password: Type.Optional(Type.String()),
  password_repeat: Type.Optional(Type.String()),
  next: Type.Optional(Type.String()),
})
const PasswordForm = Type.Object({
  current_password: Type.Optional(Type.String()),
  new_password: Type.Optional(Type.String()),
  new_password_repeat: Type.Optional(Type.String()),
  csrf_token: Type.Optional(Type.String()),
})
const NextQuery = Type.Object({ next: Type.Optional(Type.String()) })
const DoneQuery = Type.Object({ changed: Type.Optional(Type.String()) })

const USERNAME_HINT = '1–32 characters: letters, digits, "_", "." or "-". Not case-sensitive: "Alex" and "alex" are the same name.'
const PASSWORD_HINT = `At least ${MIN_PASSWORD_LENGTH} characters.`

export default async function accountPages(app: App): Promise<void> {
  app.get('/login/', { schema: { hide: true, querystring: NextQuery } }, async (request, reply) => {
    return sendPage(app, request, reply, { title: 'Sign in', body: loginForm(safeNext(request.query.next)), narrow: true })
  })

  app.post('/login/', { config: { csrfExempt: true }, schema: { hide: true, body: LoginForm } }, async (request, reply) => {
    const { username, password } = request.body
    const next = safeNext(request.body.next)
    let user
    try {
      user = await signIn(app, request.ip, username, password)
    } catch (error) {
      if (wantsJson(request)) throw error
      return formFailure(app, request, reply, error, 'Sign in', (message) => loginForm(next, message, username))
    }
    const session = await startBrowserSession(app, reply, user.id)
    if (wantsJson(request)) {
      return reply.send({ username: user.username, csrf_token: csrfTokenFor(app.gate.siteSecret, session.token) })
    }
    return reply.redirect(next, 303)
  })

  app.post('/logout/', { schema: { hide: true } }, async (request, reply) => {
    await endBrowserSession(app, reply, request.sessionToken)
    if (wantsJson(request)) return reply.send({ success: true })
    return reply.redirect('/login/', 303)
  })

  app.get('/signup/', { schema: { hide: true, querystring: NextQuery } }, async (request, reply) => {
    const next = safeNext(request.query.next)
    if (request.user) return reply.redirect('/', 303)
    return sendPage(app, request, reply, { title: 'Sign up', body: signupForm(next), narrow: true })
  })

  // No CSRF token: there is no session yet (like POST /login/). A cross-site
  // post does not carry the SameSite=Lax gate cookie, so it stops at the gate.
  app.post('/signup/', { config: { csrfExempt: true }, schema: { hide: true, body: SignupForm } }, async (request, reply) => {
    const next = safeNext(request.body.next)
    // Someone already signed in (a stale tab): keep their session rather than switch accounts silently.
    if (request.user) return reply.redirect('/', 303)
    const username = request.body.username ?? ''
    const password = request.body.password ?? ''
    let user
    try {
      validateUsername(username)
      checkNewPassword(password)
      if (password !== (request.body.password_repeat ?? '')) throw new BadRequest('the two passwords do not match')
      try {
        user = await createUser(app.db, app.passwords, username, password)
      } catch (error) {
        throw error instanceof Conflict ? new Conflict('that username is taken') : error
      }
    } catch (error) {
      return formFailure(app, request, reply, error, 'Sign up', (message) => signupForm(next, message, username))
    }
    await startBrowserSession(app, reply, user.id)
    return reply.redirect(next, 303)
  })

  app.get('/settings/password/', { config: { access: 'user' }, schema: { hide: true, querystring: DoneQuery } }, async (request, reply) => {
    const notice = request.query.changed === '1' ? 'Password changed.' : undefined
    return sendPage(app, request, reply, { title: 'Change password', body: passwordForm(csrfOf(request), undefined, notice), narrow: true })
  })

  // CSRF: checked by the auth plugin's preHandler (the hidden csrf_token field).
  app.post('/settings/password/', { config: { access: 'user' }, schema: { hide: true, body: PasswordForm } }, async (request, reply) => {
    const current = request.body.current_password ?? ''
    const next = request.body.new_password ?? ''
    try {
      checkNewPassword(next)
      if (next !== (request.body.new_password_repeat ?? '')) throw new BadRequest('the two new passwords do not match')
      await changeOwnPassword(app, request.ip, request.user!.id, current, next, request.sessionToken)
    } catch (error) {
      return formFailure(app, request, reply, error, 'Change password', (message) => passwordForm(csrfOf(request), message))
    }
    // Post/redirect/get: a reload does not post the form again.
    return reply.redirect('/settings/password/?changed=1', 303)
  })
}

/** The session's CSRF token for the form's hidden field ('' for a token-authenticated caller, who needs none). */
function csrfOf(request: FastifyRequest): string {
  return request.csrfToken ?? ''
}

function loginForm(next: string, message?: string, username = ''): SafeHtml {
  return html`<h1>Sign in</h1>${alertLine(message)}
<form method="post" action="/login/" class="card"><input type="hidden" name="next" value="${next}">
<label for="username">Username</label><input id="username" name="username" autocomplete="username" value="${username}" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<div class="actions"><button type="submit">Sign in</button></div></form>
<p>No account yet? <a href="/signup/?next=${encodeURIComponent(next)}">Sign up</a></p>`
}

function signupForm(next: string, message?: string, username = ''): SafeHtml {
  return html`<h1>Sign up</h1>${alertLine(message)}
<form method="post" action="/signup/" class="card account-form"><input type="hidden" name="next" value="${next}">
<label for="username">Username</label>
<input id="username" name="username" autocomplete="username" value="${username}" required maxlength="32" pattern="[A-Za-z0-9_.\\-]{1,32}" aria-describedby="username-hint" autocapitalize="none" spellcheck="false" ${username ? '' : html`autofocus`}>
<span class="hint" id="username-hint">${USERNAME_HINT}</span>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="password-hint" ${username ? html`autofocus` : ''}>
<span class="hint" id="password-hint">${PASSWORD_HINT}</span>
<label for="password_repeat">Repeat password</label>
<input id="password_repeat" name="password_repeat" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
<div class="actions"><button type="submit">Sign up</button></div></form>
<p>Already have an account? <a href="/login/?next=${encodeURIComponent(next)}">Sign in</a></p>`
}

function passwordForm(csrfToken: string, message?: string, notice?: string): SafeHtml {
  return html`<h1>Change password</h1>${alertLine(message)}${alertLine(notice, 'notice')}
<form method="post" action="/settings/password/" class="card account-form"><input type="hidden" name="csrf_token" value="${csrfToken}">
<label for="current_password">Current password</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required>
<label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}" aria-describedby="new-password-hint">
<span class="hint" id="new-password-hint">${PASSWORD_HINT} Your other signed-in browsers will be signed out; API tokens keep working.</span>
<label for="new_password_repeat">Repeat new password</label>
<input id="new_password_repeat" name="new_password_repeat" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD_LENGTH}">
<div class="actions"><button type="submit">Change password</button></div></form>`
}
