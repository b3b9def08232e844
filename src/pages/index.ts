// The site's pages (server-rendered HTML; src/web/client/pages/ holds each
// page's script) and the assets they link to. The JSON API they call lives in
// the resources' route files.
import type { App } from '../http/types.js'
import { pendingCountFor } from '../profiles/service.js'
import { unreadCountFor } from '../notifications/service.js'
import { setPendingCount, setUnreadCount } from '../web/respond.js'
import accountPages from './accounts.js'
import assetRoutes from './assets.js'
import browsePages from './browse.js'
import createPages from './create.js'
import gatePages from './gate.js'
import packPages from './pack.js'
import deletePages from './delete.js'
import editPages from './edit.js'
import profilePages from './profile.js'
import auditPages from './audit.js'
import statsPages from './stats.js'
import syncClientPages from './sync-client.js'
import tokenPages from './tokens.js'
import feedsPages from './feeds.js'
import teamPages from './team.js'
import invitationPages from './invitations.js'
import followPages from './follows.js'
import notificationPages from './notifications.js'
import webhookPages from './webhooks.js'

export default async function pageRoutes(app: App): Promise<void> {
  await app.register(assetRoutes)
  // The pages (not their assets): the header's counts for the signed-in user, of invitations waiting for them
  // and of their unread notifications, one indexed query each, side by side; nothing for anyone else.
  await app.register(async (pages: App) => {
    pages.addHook('preHandler', async (request) => {
      if (request.user && (request.method === 'GET' || request.method === 'POST')) {
        const [pending, unread] = await Promise.all([pendingCountFor(app.db, request.user.id, app.clock()), unreadCountFor(app.db, request.user.id)])
        setPendingCount(request, pending)
        setUnreadCount(request, unread)
      }
    })
    await pages.register(gatePages)
    await pages.register(accountPages)
    await pages.register(browsePages)
    await pages.register(packPages)
    await pages.register(deletePages)
    await pages.register(editPages)
    await pages.register(profilePages)
    await pages.register(createPages)
    await pages.register(tokenPages)
    await pages.register(feedsPages)
    await pages.register(teamPages)
    await pages.register(invitationPages)
    await pages.register(followPages)
    await pages.register(notificationPages)
    await pages.register(webhookPages)
    await pages.register(statsPages)
    await pages.register(auditPages)
    await pages.register(syncClientPages)
  })
}
