// Packs: the listing, a pack's page data and new versions (docs/decisions.md#publishing). The
// update-check on /api/packs/{namespace}/{pack_id}/latest is its own module
// (src/update-check/).
import { PACKS_PER_PAGE } from '../api/constants.js'
import { acceptFileForms, readFileForm } from '../http/multipart.js'
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import { NewVersionBody, Pack, PackList, PackListQuery, PackParams } from '../api/packs.js'
import { toPack, toPackSummary } from './mapper.js'
import { fileUrls } from '../http/urls.js'
import { addVersion, getPack, listPackPage } from './service.js'
import { searchOf } from './search-query.js'
import { searchPackPage } from './search-service.js'

export default async function packsRoutes(app: App): Promise<void> {
  app.get('/api/packs/', {
    config: { access: 'gate', heavy: true },
    schema: {
      summary: 'List packs',
      description: 'Most recently updated first (see sort). Filters combine: title search, tag name, category key, member. '
        + 'Hidden packs and packs of disabled accounts are left out.',
      tags: ['packs'],
      querystring: PackListQuery,
      response: { 200: PackList, ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const query = request.query
    const { q, tag, category, member } = query
    const page = query.page ?? 1
    const perPage = query.per_page ?? PACKS_PER_PAGE
    const urls = fileUrls(app.config, request)
    const search = searchOf(query)
    if (search) {
      const { items, total, capped, facets } = await searchPackPage(app.db, search, page, perPage)
      return { items: items.map((p) => toPackSummary(p, urls)), page, per_page: perPage, total, total_capped: capped, ...(facets ? { facets } : {}) }
    }
    const sort = query.sort === 'downloads' || query.sort === 'created' ? query.sort : 'updated'
    const { items, total, capped } = await listPackPage(app.db, { tag, category, member }, page, perPage, sort)
    return { items: items.map((p) => toPackSummary(p, urls)), page, per_page: perPage, total, total_capped: capped }
  })

  app.get('/api/packs/:namespace/:pack_id/', {
    config: { access: 'gate', heavy: true },
    schema: {
      summary: 'A pack',
      description: 'Everything a pack page shows, with all versions newest first. A hidden pack is 404 except to its owner and staff.',
      tags: ['packs'],
      params: PackParams,
      response: { 200: Pack, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const pack = await getPack(app.db, request.params.namespace, request.params.pack_id, request.user)
    return toPack(pack, fileUrls(app.config, request))
  })
}

/**
 * New versions, in a plugin (so a scope) of their own: the multipart parser's
 * hooks stay off every other route. Registered after the update-check, whose
 * path sorts between a pack and its versions in the API's document.
 */
export async function packVersionsRoutes(app: App): Promise<void> {
  await acceptFileForms(app, app.config)

  app.post('/api/packs/:namespace/:pack_id/versions/', {
    config: { access: 'user' },
    // The multipart body is read as a stream below; the schema documents it (and params are plain strings).
    validatorCompiler: () => () => true,
    schema: {
      summary: 'Add a version to a pack',
      description: 'Owner only (someone else\'s pack is 404). multipart/form-data, parts in any order: file (a ZIP archive), '
        + 'version_name (unique within the pack), changelog (optional). The new version becomes the newest at once.',
      tags: ['packs'],
      security: bearerAuth,
      consumes: ['multipart/form-data'],
      params: PackParams,
      body: NewVersionBody,
      response: { 201: Pack, ...errorResponses(400, 401, 404, 409, 413) },
    },
  }, async (request, reply) => {
    const pack = await addVersion(app, request.user!, request.params.namespace, request.params.pack_id, async (archives) => {
      const { file, fields } = await readFileForm(request, {
        fileField: 'file',
        // Sees the fields sent before the file: a known duplicate name is refused before the archive is stored.
        onFile: (part, fieldsSoFar) => archives.store(part.file, part.filename, fieldsSoFar.get('version_name')),
        discard: (stored) => archives.discard(stored),
      })
      return { file, versionName: fields.get('version_name'), changelog: fields.get('changelog') }
    }, request.tokenReach)
    return reply.code(201).send(toPack(pack, fileUrls(app.config, request)))
  })
}
