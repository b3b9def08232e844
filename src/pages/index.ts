// The site's pages (server-rendered HTML; src/web/client/pages/ holds each
// page's script) and the assets they link to. The JSON API they call lives in
// the resources' route files.
import type { App } from '../http/types.js'
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

export default async function pageRoutes(app: App): Promise<void> {
  await app.register(assetRoutes)
  await app.register(gatePages)
  await app.register(accountPages)
  await app.register(browsePages)
  await app.register(packPages)
  await app.register(deletePages)
  await app.register(editPages)
  await app.register(profilePages)
  await app.register(createPages)
  await app.register(tokenPages)
  await app.register(statsPages)
  await app.register(auditPages)
  await app.register(syncClientPages)
}
