// Packs: the listing, a pack's page data, the in-game update-check
// (SPEC: /api/packs/{namespace}/{pack_id}/latest) and new versions (CONTRACT §5).
import { createHash } from 'node:crypto'
import { Type } from 'typebox'
import { findLatestVersion, findOwnedPackId, listPacks, loadPackDetail, versionNameTaken } from './repository.js'
import { BadRequest, Conflict, NotFound } from '../errors.js'
import { ingestFile } from '../uploads/ingest.js'
import { addVersion } from './publishing.js'
import { noneMatch } from '../http/conditional.js'
import { publicOrigin } from '../http/urls.js'
import { packKey, type LatestAnswer } from '../update-check/cache.js'
import { acceptFileForms, readFileForm } from '../http/multipart.js'
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import {
  NewVersionBody, Pack, PackLatest, PackList, PackListQuery, PackParams, fileUrls, toPack, toPackLatest, toPackSummary,
  type PackLatestBody,
} from '../api/packs.js'

const DEFAULT_PER_PAGE = 20

export default async function packsRoutes(app: App): Promise<void> {
  app.get('/api/packs/', {
    config: { access: 'gate' },
    schema: {
      summary: 'List packs',
      description: 'Most recently updated first. Filters combine: title search, tag name, category key.',
      tags: ['packs'],
      querystring: PackListQuery,
      response: { 200: PackList, ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const page = request.query.page ?? 1
    const perPage = request.query.per_page ?? DEFAULT_PER_PAGE
    const { items, total } = await listPacks(
      app.db,
      { q: request.query.q, tag: request.query.tag, category: request.query.category },
      { limit: perPage, offset: (page - 1) * perPage },
    )
    const urls = fileUrls(app.config, request)
    return { items: items.map((p) => toPackSummary(p, urls)), page, per_page: perPage, total }
  })

  app.get('/api/packs/:namespace/:pack_id/', {
    config: { access: 'gate' },
    schema: {
      summary: 'A pack',
      description: 'Everything a pack page shows, with all versions newest first.',
      tags: ['packs'],
      params: PackParams,
      response: { 200: Pack, ...errorResponses(401, 404) },
    },
  }, async (request) => {
    const { namespace, pack_id: packId } = lowerParams(request.params)
    const pack = await loadPackDetail(app.db, namespace, packId)
    if (!pack) throw new NotFound('pack not found')
    return toPack(pack, fileUrls(app.config, request))
  })

  app.get('/api/packs/:namespace/:pack_id/latest', {
    config: { access: 'gate' },
    schema: {
      summary: 'Pack update-check',
      description: 'The newest version of the pack namespace:pack_id, for in-game auto-updaters. Answers with a strong ETag '
        + 'and Cache-Control: no-cache; send If-None-Match to get 304 while nothing changed.',
      tags: ['packs'],
      params: PackParams,
      response: { 200: PackLatest, 304: Type.Null({ description: 'Not modified: the ETag still matches.' }), ...errorResponses(401, 404) },
    },
  }, async (request, reply) => {
    const { namespace, pack_id: packId } = lowerParams(request.params)
    const key = packKey(namespace, packId)
    const origin = publicOrigin(app.config, request)
    const cache = app.latestCache
    // With REDIS_URL: one small read, so a publish through another instance is seen at once.
    if (cache.revalidate !== undefined) await cache.revalidate(key)
    let answer = cache.get(key, origin)
    if (answer === undefined) {
      const generation = cache.currentGeneration()
      const latest = await findLatestVersion(app.db, namespace, packId)
      answer = latest ? latestAnswer(JSON.stringify(toPackLatest(latest, fileUrls(app.config, request)))) : null
      cache.set(key, origin, answer, generation)
    }
    if (answer === null) throw new NotFound('pack not found')
    // Clients may cache, but must ask every time: a new version has to be seen at once.
    reply.header('etag', answer.etag).header('cache-control', 'no-cache')
    if (noneMatch(request.headers['if-none-match'], answer.etag)) {
      // No content, so no Content-Length: a serialised null once claimed 4 bytes that never came, and strict
      // clients waited for them. Fastify's automatic HEAD route states the length of whatever it is handed
      // ("0" for nothing), so HEAD is handed the 200's body: its length and type are the only ones RFC 9110
      // §8.6 allows on a 304, and no body goes out after a HEAD.
      if (request.method !== 'HEAD') return reply.code(304).send(undefined as never)
      return reply.code(304).type('application/json; charset=utf-8').send(answer.body as never)
    }
    // A string with a JSON content type goes out as is; the response schema still documents it.
    return reply.type('application/json; charset=utf-8').send(answer.body as unknown as PackLatestBody)
  })

  // In a scope of its own, so the multipart parser's hooks stay off the update-check.
  await app.register(async (scope: App) => {
    await acceptFileForms(scope, app.config)

    scope.post('/api/packs/:namespace/:pack_id/versions/', {
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
      const user = request.user!
      const { namespace, pack_id: packId } = lowerParams(request.params)
      const packRowId = await findOwnedPackId(app.db, user.id, namespace, packId)
      if (!packRowId) throw new NotFound('pack not found')

      const { file, fields } = await readFileForm(request, {
        fileField: 'file',
        async onFile(part, fieldsSoFar) {
          // Known already (sent before the file)? Then refuse a duplicate before storing the archive.
          const earlyName = fieldsSoFar.get('version_name')?.trim()
          if (earlyName && (await versionNameTaken(app.db, packRowId, earlyName))) {
            part.file.resume()
            throw new Conflict(`the pack already has a version named "${earlyName}"`)
          }
          return ingestFile(app.store, part.file, { kind: 'version', maxBytes: app.config.uploadLimits.version, clientFilename: part.filename })
        },
        discard: (ingested) => app.store.delete(ingested.id),
      })
      if (!file) throw new BadRequest('the "file" part (a ZIP archive) is required')
      await addVersion(app.db, app.store, {
        ownerId: user.id,
        packRowId,
        file,
        versionName: fields.get('version_name'),
        changelog: fields.get('changelog'),
      })
      // Awaited: with REDIS_URL the 201 goes out only once every instance will see the new version.
      await app.latestCache.invalidate(packKey(namespace, packId))
      const pack = await loadPackDetail(app.db, namespace, packId)
      if (!pack) throw new NotFound('pack not found')
      return reply.code(201).send(toPack(pack, fileUrls(app.config, request)))
    })
  })
}

/** Namespaces and pack ids are stored in lower case; the lookup is case-insensitive. */
function lowerParams(params: { namespace: string; pack_id: string }): { namespace: string; pack_id: string } {
  return { namespace: params.namespace.toLowerCase(), pack_id: params.pack_id.toLowerCase() }
}

/** The ETag is the hash of exactly the bytes sent, computed once per cached answer. */
function latestAnswer(body: string): NonNullable<LatestAnswer> {
  return { body, etag: `"${createHash('sha256').update(body).digest('hex').slice(0, 32)}"` }
}
