// The client bundle (/assets/<name>-<hash>.js|css) and the category colors
// stylesheet the pages link to.
import { createHash } from 'node:crypto'
import { Type } from 'typebox'
import { listCategories } from '../packs/tags.js'
import { noneMatch } from '../http/conditional.js'
import type { App } from '../http/types.js'
import { categoryStylesheet } from '../web/categories.js'

const AssetParams = Type.Object({ name: Type.String() })

export default async function assetRoutes(app: App): Promise<void> {
  // Category colors change only through the admin CLI; revalidated with an ETag on each page view.
  app.get('/assets/categories.css', { config: { access: 'gate' }, schema: { hide: true } }, async (request, reply) => {
    const body = categoryStylesheet(await listCategories(app.db))
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`
    reply.header('etag', etag).header('cache-control', 'no-cache')
    if (noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send()
    return reply.type('text/css; charset=utf-8').send(body)
  })

  // Browsers and feed readers ask for /favicon.ico whatever the page links to; it is the site's SVG icon
  // (every current browser takes an SVG there), public like the gate page that shows it.
  // The bundle is loaded once at start and never changes, so the icon is looked up once, here.
  const icon = app.assets.file(app.assets.url('favicon.svg').slice('/assets/'.length))!
  app.get('/favicon.ico', { config: { access: 'public' }, schema: { hide: true } }, async (_request, reply) => {
    return reply.header('cache-control', 'public, max-age=86400').type(icon.contentType).send(icon.body)
  })

  // Code and styles are no secret, and the gate page needs them before the gate is passed.
  app.get('/assets/:name', { config: { access: 'public' }, schema: { hide: true, params: AssetParams } }, async (request, reply) => {
    const asset = app.assets.file(request.params.name)
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('not found')
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .type(asset.contentType)
      .send(asset.body)
  })
}
