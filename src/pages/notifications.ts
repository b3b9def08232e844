// The signed-in user's notifications, /notifications/ (docs/notifications.md#notifications): newest first, the
// unread ones marked, each linking to what it is about, with a Mark read button on each unread one and Mark all
// read. The forms post here and work without JavaScript; the JSON API is src/notifications/routes.ts. The
// header's bell (src/web/layout.ts) links this page with the unread count.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { NOTIFICATIONS_KEPT, type NotificationBody } from '../api/notifications.js'
import type { App } from '../http/types.js'
import { markAllNotificationsRead, markNotificationRead, notificationsFor } from '../notifications/service.js'
import { timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { alertLine } from '../web/layout.js'
import { sendPage } from '../web/respond.js'
import { userHref } from './pack-card.js'

const ReadParams = Type.Object({ notification_id: Type.String() })
const CsrfOnly = Type.Object({ csrf_token: Type.Optional(Type.String()) })
const PageQuery = Type.Object({ done: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])) })

/** Fixed sentences for ?done=, so a link cannot put words on the page. */
const DONE: Record<string, string> = {
  read: 'Marked read.',
  'all-read': 'All your notifications are marked read.',
}

export default async function notificationPages(app: App): Promise<void> {
  app.get('/notifications/', {
    config: { access: 'user' },
    schema: { hide: true, querystring: PageQuery },
  }, async (request, reply) => {
    const done = typeof request.query.done === 'string' ? DONE[request.query.done] : undefined
    return renderNotifications(app, request, reply, done)
  })

  const route = { config: { access: 'user' as const }, schema: { hide: true, body: CsrfOnly } }
  app.post('/notifications/read/', route, async (request, reply) => {
    await markAllNotificationsRead(app.db, request.user!.id, app.clock())
    return reply.redirect('/notifications/?done=all-read', 303)
  })
  app.post('/notifications/:notification_id/read/', { ...route, schema: { ...route.schema, params: ReadParams } }, async (request, reply) => {
    // Someone else's or an unknown id: the 404 page, as the API's 404.
    await markNotificationRead(app.db, request.user!.id, request.params.notification_id, app.clock())
    return reply.redirect('/notifications/?done=read', 303)
  })
}

async function renderNotifications(app: App, request: FastifyRequest, reply: FastifyReply, notice: string | undefined): Promise<FastifyReply> {
  const user = request.user!
  // Everyone keeps at most NOTIFICATIONS_KEPT, so one page holds them all.
  const list = await notificationsFor(app.db, user.id, { limit: NOTIFICATIONS_KEPT, offset: 0 })
  const csrf = request.csrfToken ?? ''
  const csrfField = html`<input type="hidden" name="csrf_token" value="${csrf}">`
  const body = html`<article class="notifications-page">
<div class="notifications-head">
<h1>Notifications</h1>
${list.unread > 0
    ? html`<form method="post" action="/notifications/read/" class="mark-all">${csrfField}<button type="submit" class="secondary">Mark all read</button></form>`
    : null}
</div>
${alertLine(notice, 'notice')}
<p class="hint notifications-summary">${summary(list.unread, list.total)} You keep the newest ${NOTIFICATIONS_KEPT}; older ones go.
<a href="${`${userHref(user.username)}#follows-heading`}">The packs you follow</a> are on your profile.</p>
${list.items.length === 0
    ? html`<div class="empty card"><p>Nothing yet. Follow a pack from its page to hear of its new versions here; staff's actions on your packs and invitations into a team show here too.</p></div>`
    : html`<ol class="notifications">${list.items.map((n, index) => item(n, index, csrfField))}</ol>`}
</article>`
  return sendPage(app, request, reply, { title: list.unread > 0 ? `Notifications (${list.unread} unread)` : 'Notifications', body })
}

function summary(unread: number, total: number): string {
  if (total === 0) return 'You have no notifications.'
  const all = `${total} ${total === 1 ? 'notification' : 'notifications'}`
  return unread === 0 ? `${all}, all read.` : `${all}, ${unread} unread.`
}

function item(n: NotificationBody, index: number, csrfField: SafeHtml): SafeHtml {
  const textId = `notification-${index + 1}`
  const unread = n.read_at === null
  return html`<li class="${unread ? 'card notification unread' : 'card notification'}" data-id="${n.id}">
<p class="notification-text" id="${textId}">${unread ? html`<span class="unread-badge">Unread</span> ` : null}<a href="${n.link}">${n.text}</a></p>
<div class="notification-foot">
<span class="hint">${timeTag(n.created_at, true)}</span>
${unread
    ? html`<form method="post" action="${`/notifications/${encodeURIComponent(n.id)}/read/`}" class="mark-read">${csrfField}<button type="submit" class="secondary" aria-describedby="${textId}">Mark read</button></form>`
    : null}
</div>
</li>`
}
