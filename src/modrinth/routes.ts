// The Modrinth-compatible API (src/api/modrinth.ts): Modrinth v2's read
// paths under /api/modrinth/v2/, for launchers and client libraries given the
// base URL https://<site>/api/modrinth. Like the update-check, the site gate
// is enough; an API token is also taken Modrinth's way, `Authorization:
// <token>` (config.bareToken), and a read-only token may send the lookups
// that Modrinth makes by POST (config.query).
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type, type Static } from 'typebox'
import { errorResponses } from '../api/common.js'
import {
  AlgorithmQuery, FileLinkParams, FileLinkQuery, GameVersionTagQuery, HashesBody, HashesUpdateBody, HashQuery, HashRef, IdsQuery, MODRINTH_PREFIX,
  ModrinthCategoryTag, ModrinthGameVersionTag, ModrinthProject, ModrinthSearchQuery, ModrinthSearchResults, ModrinthVersion, ModrinthTeamMember,
  ProjectRef, ProjectVersionsQuery, TeamRef, UpdateFilterBody, VersionRef, VersionsByHash,
} from '../api/modrinth.js'
import type { App } from '../http/types.js'
import { publicOrigin } from '../http/urls.js'
import type { FileUrls } from '../http/urls.js'
import { fileResponses } from '../api/files.js'
import { isUuid } from '../api/constants.js'
import { Forbidden, NotFound } from '../errors.js'
import { serveFile } from '../files/routes.js'
import { FILE_LINK_PATH, fileLinkHolds, fileLinkKey, signedFileUrls } from './file-links.js'
import { fileOfListedPack } from './file-links-repository.js'
import { toModrinthCategoryTags, toModrinthProject, toModrinthSearchHit, toModrinthTeam, toModrinthVersion } from './mapper.js'
import { listCategoriesAndTags } from './repository.js'
import { gameVersionTags, searchProjects } from './search.js'
import {
  getProject, getProjects, getProjectTeam, getProjectVersions, getTeam, getTeams, getVersion, getVersions, parseJsonList, updateByHash, updatesByHash, versionByHash,
  versionsByHash, type PackVersion,
} from './service.js'

const V2 = `${MODRINTH_PREFIX}/v2`
const tags = ['modrinth']
const read = { access: 'gate', bareToken: true } as const
const lookup = { ...read, query: true } as const

export default async function modrinthRoutes(app: App): Promise<void> {
  /** The answer's URLs: signed links (./file-links.ts), which a launcher's downloader can open without the gate. */
  const fileUrls = async (_config: unknown, request: FastifyRequest): Promise<FileUrls> =>
    signedFileUrls(await fileLinkKey(app.gate), publicOrigin(app.config, request), app.clock())

  const linkSchema = {
    summary: 'A file by signed link',
    description: 'The file links in this API\'s answers. They need no gate: the signature (over the file id and the expiry, with a key '
      + 'derived from the site secret and the gate password) is the proof that a caller past the gate was given the link. A link '
      + 'stops working when it expires or the gate password changes (403), and while the file\'s pack is hidden or its owner '
      + 'disabled (404). Otherwise as GET /api/files/{file_id}/.',
    tags, params: FileLinkParams, querystring: FileLinkQuery, response: fileResponses,
  }
  const serveLink = async (request: FastifyRequest, reply: FastifyReply, fileId: string, query: Static<typeof FileLinkQuery>, withBody: boolean) => {
    // A link made under an earlier gate password is refused like an expired one: the caller asks the API again, past the gate.
    if (!fileLinkHolds(await fileLinkKey(app.gate), fileId, query.expires, query.signature, app.clock())) {
      throw new Forbidden('this file link is expired or not one this site made (a link made before the site password changed is no longer one): ask the API again for a fresh one')
    }
    // The link opens only what everyone past the gate may see: a hidden pack's files, or a disabled owner's, are not found.
    if (!isUuid(fileId) || !(await fileOfListedPack(app.db, fileId.toLowerCase()))) throw new NotFound('file not found')
    return serveFile(app, request, reply, { fileId, download: query.download === '1', withBody })
  }
  app.get(FILE_LINK_PATH, { config: { access: 'public' }, exposeHeadRoute: false, schema: linkSchema }, (request, reply) =>
    serveLink(request, reply, request.params.file_id, request.query, true))
  app.head(FILE_LINK_PATH, { config: { access: 'public' }, schema: { ...linkSchema, hide: true } }, (request, reply) =>
    serveLink(request, reply, request.params.file_id, request.query, false))

  app.get(`${V2}/project/:id`, {
    config: read,
    schema: { summary: 'A project (Modrinth v2)', description: 'A pack by its 8-character id or "namespace:pack_id".', tags, params: ProjectRef, response: { 200: ModrinthProject, ...errorResponses(400, 401, 404) } },
  }, async (request) => toModrinthProject(await getProject(app.db, request.params.id, request.user), await fileUrls(app.config, request), publicOrigin(app.config, request)))

  app.get(`${V2}/projects`, {
    config: read,
    schema: { summary: 'Several projects (Modrinth v2)', description: 'The packs of a JSON list of ids or "namespace:pack_id"; unknown ones are left out.', tags, querystring: IdsQuery, response: { 200: Type.Array(ModrinthProject), ...errorResponses(400, 401) } },
  }, async (request) => {
    const urls = await fileUrls(app.config, request)
    const origin = publicOrigin(app.config, request)
    return (await getProjects(app.db, parseJsonList(request.query.ids, 'ids'), request.user)).map((pack) => toModrinthProject(pack, urls, origin))
  })

  app.get(`${V2}/project/:id/version`, {
    config: read,
    schema: {
      summary: 'A project\'s versions (Modrinth v2)',
      description: 'Newest first, yanked ones too (status "archived"); `loaders` and `game_versions` (JSON lists) keep those for any of them.',
      tags, params: ProjectRef, querystring: ProjectVersionsQuery, response: { 200: Type.Array(ModrinthVersion), ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const { loaders, game_versions: gameVersions, featured } = request.query
    const filter = {
      loaders: loaders === undefined ? undefined : parseJsonList(loaders, 'loaders'),
      gameVersions: gameVersions === undefined ? undefined : parseJsonList(gameVersions, 'game_versions'),
      featured,
    }
    return versionsOut(request, await getProjectVersions(app.db, request.params.id, filter, request.user))
  })

  const membersNote = 'The owner first ("Owner"), then members ("Maintainer", "Uploader") by when they joined. The pack\'s team and staff '
    + 'also see open invitations (accepted false), each one\'s permissions and payouts_split; anyone else sees those two as null, as on Modrinth.'
  app.get(`${V2}/project/:id/members`, {
    config: read,
    schema: { summary: 'A project\'s team (Modrinth v2)', description: membersNote, tags, params: ProjectRef, response: { 200: Type.Array(ModrinthTeamMember), ...errorResponses(400, 401, 404) } },
  }, async (request) => toModrinthTeam(await getProjectTeam(app.db, request.params.id, request.user)))

  app.get(`${V2}/team/:id/members`, {
    config: read,
    schema: { summary: 'A team (Modrinth v2)', description: `A team by its id, a project's \`team\`. ${membersNote}`, tags, params: TeamRef, response: { 200: Type.Array(ModrinthTeamMember), ...errorResponses(400, 401, 404) } },
  }, async (request) => toModrinthTeam(await getTeam(app.db, request.params.id, request.user)))

  app.get(`${V2}/teams`, {
    config: read,
    schema: { summary: 'Several teams (Modrinth v2)', description: 'The members of each team of a JSON list of team ids, in its order; unknown ones are left out.', tags, querystring: IdsQuery, response: { 200: Type.Array(Type.Array(ModrinthTeamMember)), ...errorResponses(400, 401) } },
  }, async (request) => (await getTeams(app.db, parseJsonList(request.query.ids, 'ids'), request.user)).map(toModrinthTeam))

  app.get(`${V2}/version/:id`, {
    config: read,
    schema: { summary: 'A version (Modrinth v2)', tags, params: VersionRef, response: { 200: ModrinthVersion, ...errorResponses(400, 401, 404) } },
  }, async (request) => versionOut(request, await getVersion(app.db, request.params.id, request.user)))

  app.get(`${V2}/versions`, {
    config: read,
    schema: { summary: 'Several versions (Modrinth v2)', description: 'The versions of a JSON list of ids; unknown ones are left out.', tags, querystring: IdsQuery, response: { 200: Type.Array(ModrinthVersion), ...errorResponses(400, 401) } },
  }, async (request) => versionsOut(request, await getVersions(app.db, parseJsonList(request.query.ids, 'ids'), request.user)))

  app.get(`${V2}/version_file/:hash`, {
    config: read,
    schema: {
      summary: 'The version of an archive (Modrinth v2)',
      description: 'The version whose archive has this SHA-1 (default) or SHA-256: the first published one when several share the bytes, yanked ones included.',
      tags, params: HashRef, querystring: HashQuery, response: { 200: ModrinthVersion, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => versionOut(request, await versionByHash(app.db, request.params.hash, request.query.algorithm, request.user)))

  app.post(`${V2}/version_files`, {
    config: lookup,
    schema: { summary: 'The versions of several archives (Modrinth v2)', description: 'Up to 200 hashes; each that matches, as sent, with its version.', tags, body: HashesBody, response: { 200: VersionsByHash, ...errorResponses(400, 401) } },
  }, async (request) => byHashOut(request, await versionsByHash(app.db, request.body.hashes, request.body.algorithm, request.user)))

  app.post(`${V2}/version_file/:hash/update`, {
    config: lookup,
    schema: {
      summary: 'The update of an archive (Modrinth v2)',
      description: 'The newest version of the archive\'s pack that is not yanked and is for one of `loaders` and one of `game_versions` (empty lists: any); 404 when none is.',
      tags, params: HashRef, querystring: AlgorithmQuery, body: UpdateFilterBody, response: { 200: ModrinthVersion, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const filter = { loaders: request.body.loaders, gameVersions: request.body.game_versions }
    return versionOut(request, await updateByHash(app.db, request.params.hash, request.query.algorithm, filter, request.user))
  })

  app.post(`${V2}/version_files/update`, {
    config: lookup,
    schema: {
      summary: 'The updates of several archives (Modrinth v2)',
      description: 'The update of each of up to 200 archives, as the single call gives it; hashes without one are left out.',
      tags, body: HashesUpdateBody, response: { 200: VersionsByHash, ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const { hashes, algorithm, loaders, game_versions: gameVersions } = request.body
    return byHashOut(request, await updatesByHash(app.db, hashes, algorithm, { loaders, gameVersions }, request.user))
  })

  app.get(`${V2}/search`, {
    config: read,
    schema: {
      summary: 'Search projects (Modrinth v2)',
      description: 'The packs that match the words and facets, as GET /api/packs/ finds them (the same words, ranking and listing: a '
        + 'hidden pack, a disabled owner\'s or one with no public version never appears), in Modrinth\'s SearchResult shape. '
        + 'total_hits counts up to 1,000. When a facets group is one the packs search cannot say in one filter (several tags in one '
        + 'group, a tag or category beside a loader, several authors, resourcepack AND datapack), that group is checked on the first '
        + '1,000 hits of the rest.',
      tags, querystring: ModrinthSearchQuery, response: { 200: ModrinthSearchResults, ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const { query, facets, index, filter, filters } = request.query
    const offset = request.query.offset ?? 0
    const limit = request.query.limit ?? 10
    const found = await searchProjects(app.db, { query, facets, index, offset, limit, filter: filter || filters })
    const urls = await fileUrls(app.config, request)
    const origin = publicOrigin(app.config, request)
    return { hits: found.packs.map((pack) => toModrinthSearchHit(pack, urls, origin)), offset, limit, total_hits: found.total }
  })

  app.get(`${V2}/tag/category`, {
    config: read,
    schema: {
      summary: 'Category tags (Modrinth v2)',
      description: 'Each category (header "categories", name its key) and each tag (header its category\'s key, name the tag), once for '
        + 'each project type: the names a `categories` facet takes.',
      tags, response: { 200: Type.Array(ModrinthCategoryTag), ...errorResponses(401) },
    },
  }, async () => toModrinthCategoryTags(await listCategoriesAndTags(app.db)))

  app.get(`${V2}/tag/game_version`, {
    config: read,
    schema: {
      summary: 'Game version tags (Modrinth v2)',
      description: 'The Minecraft releases this site knows, newest first; `type` and `major` filter them as on Modrinth. No snapshots, and no dates (null).',
      tags, querystring: GameVersionTagQuery, response: { 200: Type.Array(ModrinthGameVersionTag), ...errorResponses(400, 401) },
    },
  }, async (request) => gameVersionTags(request.query))

  app.get(`${V2}/tag/project_type`, {
    config: read,
    schema: {
      summary: 'Project types (Modrinth v2)',
      description: 'The kinds of project here: "resourcepack" and "datapack".',
      tags, response: { 200: Type.Array(Type.String()), ...errorResponses(401) },
    },
  }, async () => ['resourcepack', 'datapack'])

  async function versionOut(request: FastifyRequest, found: PackVersion) {
    return toModrinthVersion(found.pack, found.version, await fileUrls(app.config, request))
  }
  async function versionsOut(request: FastifyRequest, found: readonly PackVersion[]) {
    const urls = await fileUrls(app.config, request)
    return found.map(({ pack, version }) => toModrinthVersion(pack, version, urls))
  }
  async function byHashOut(request: FastifyRequest, found: Map<string, PackVersion>) {
    const urls = await fileUrls(app.config, request)
    return Object.fromEntries([...found].map(([hash, { pack, version }]) => [hash, toModrinthVersion(pack, version, urls)]))
  }
}
