// The gate page (docs/decisions.md#the-gate): the site password as a form, which sets the
// gate cookie. Public: it is how a browser gets past the gate.
import { Type } from 'typebox'
import { checkGatePassword } from '../auth/attempts.js'
import { setGateCookie } from '../auth/cookies.js'
import type { App } from '../http/types.js'
import { safeNext } from '../http/urls.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'
import { sendPage } from '../web/respond.js'
import { formFailure } from './forms.js'

const GateForm = Type.Object({ password: Type.String(), next: Type.Optional(Type.String()) })
const NextQuery = Type.Object({ next: Type.Optional(Type.String()) })

export default async function gatePages(app: App): Promise<void> {
  app.get('/gate/', { config: { access: 'public' }, schema: { hide: true, querystring: NextQuery } }, async (request, reply) => {
    return sendPage(app, request, reply, { title: 'Enter the site password', body: gateForm(safeNext(request.query.next)), narrow: true })
  })

  app.post('/gate/', { config: { access: 'public' }, schema: { hide: true, body: GateForm } }, async (request, reply) => {
    const next = safeNext(request.body.next)
    try {
      await checkGatePassword(app, request.ip, request.body.password, 'wrong password')
    } catch (error) {
      return formFailure(app, request, reply, error, 'Enter the site password', (message) => gateForm(next, message))
    }
    await setGateCookie(app, reply)
    return reply.redirect(next, 303)
  })
}

function gateForm(next: string, message?: string): SafeHtml {
  return html`<h1>Packs</h1><p>This site is private. Enter the site password to continue.</p>${alertLine(message)}
<form method="post" action="/gate/" class="card"><input type="hidden" name="next" value="${next}">
<label for="password">Site password</label><input id="password" name="password" type="password" autocomplete="current-password" required autofocus>
<div class="actions"><button type="submit">Enter</button></div></form>`
}
