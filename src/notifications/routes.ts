// The signed-in user's notifications through the API (docs/notifications.md#notifications): the list with its
// unread count, and marking one or all of them read. The page /notifications/ (src/pages/notifications.ts)
// shows the same list. Another user's notification is not found, as a missing one is.
import type { App } from '../http/types.js'
import { NoContent, bearerAuth, errorResponses } from '../api/common.js'
import { NOTIFICATIONS_KEPT, NotificationList, NotificationParams, NotificationQuery } from '../api/notifications.js'
import { markAllNotificationsRead, markNotificationRead, notificationsFor } from './service.js'

export default async function notificationRoutes(app: App): Promise<void> {
  app.get('/api/notifications/', {
    config: { access: 'user' },
    schema: {
      summary: 'Your notifications',
      description: 'Newest first: new versions of packs you follow, staff hiding or showing your pack (with their reason), staff yanking a '
        + `version of yours, invitations into a pack's team, a webhook of yours switched off. You keep the newest ${NOTIFICATIONS_KEPT}; `
        + 'past that the oldest go. unread=true lists the unread ones only; `unread` and `total` count all of yours.',
      tags: ['notifications'],
      security: bearerAuth,
      querystring: NotificationQuery,
      response: { 200: NotificationList, ...errorResponses(400, 401) },
    },
  }, async (request) => notificationsFor(app.db, request.user!.id, request.query))

  app.post('/api/notifications/:notification_id/read/', {
    config: { access: 'user' },
    schema: {
      summary: 'Mark a notification read',
      description: 'Marking a read one again changes nothing. An id that is not one of your notifications is 404.',
      tags: ['notifications'],
      security: bearerAuth,
      params: NotificationParams,
      response: { 204: NoContent, ...errorResponses(400, 401, 404) },
    },
  }, async (request, reply) => {
    await markNotificationRead(app.db, request.user!.id, request.params.notification_id, app.clock())
    return reply.code(204).send(null)
  })

  app.post('/api/notifications/read/', {
    config: { access: 'user' },
    schema: {
      summary: 'Mark all your notifications read',
      description: 'Every unread notification of yours becomes read at once.',
      tags: ['notifications'],
      security: bearerAuth,
      response: { 204: NoContent, ...errorResponses(401) },
    },
  }, async (request, reply) => {
    await markAllNotificationsRead(app.db, request.user!.id, app.clock())
    return reply.code(204).send(null)
  })
}
