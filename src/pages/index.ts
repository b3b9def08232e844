// The site's pages (server-rendered HTML; src/web/client/pages/ holds each
// page's script) and the assets they link to. The JSON API they call lives in
// the resources' route files.
import type { App } from '../http/types.js'
import { pendingCountFor } from '../profiles/service.js'
import { setPendingCount } from '../web/respond.js'
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
import teamPages from './team.js'
import invitationPages from './invitations.js'

export default async function pageRoutes(app: App): Promise<void> {
  await app.register(assetRoutes)
  // The pages (not their assets): the header's count of invitations waiting for the signed-in user, one query.
  await app.register(async (pages: App) => {
    pages.addHook('preHandler', async (request) => {
      if (request.user && (request.method === 'GET' || request.method === 'POST')) {
        setPendingCount(request, await pendingCountFor(app.db, request.user.id, app.clock()))
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
    await pages.register(teamPages)
    await pages.register(invitationPages)
    await pages.register(statsPages)
    await pages.register(auditPages)
    await pages.register(syncClientPages)
  })
}
