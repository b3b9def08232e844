// The Modrinth-compatible API: a read-only subset of
// Modrinth's v2 API under /api/modrinth/v2/, in Modrinth's own shapes, so an
// existing Modrinth client pointed at a Packs site (base URL
// https://<site>/api/modrinth) lists a pack's versions, identifies a local
// archive by hash and finds its update. Fields Packs has no notion of carry
// Modrinth's neutral value (no donation links, no dependencies).
import { Type, type Static } from 'typebox'
import { MAX_BATCH_SIZE } from './update-check.js'

/** Where the API lives; a client's base URL is the site's origin plus this. */
export const MODRINTH_PREFIX = '/api/modrinth'

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()])

export const ModrinthFile = Type.Object({
  hashes: Type.Object(
    { sha1: Type.Optional(Type.String()), sha256: Type.String() },
    { description: 'Lower-case hex. SHA-1 and SHA-256 (Modrinth gives SHA-1 and SHA-512; this site keeps no SHA-512).' },
  ),
  url: Type.String({ description: 'Absolute download URL (behind the site gate, like every file here).' }),
  filename: Type.String(),
  primary: Type.Boolean(),
  size: Type.Integer(),
  file_type: Type.Null(),
}, { title: 'ModrinthFile' })

export const ModrinthVersion = Type.Object({
  id: Type.String({ description: 'The version\'s 8-character id.' }),
  project_id: Type.String(),
  author_id: Type.String({ description: 'The pack owner\'s user id.' }),
  featured: Type.Boolean(),
  name: Type.String(),
  version_number: Type.String(),
  changelog: Type.String(),
  changelog_url: Type.Null(),
  date_published: Type.String({ format: 'date-time' }),
  downloads: Type.Integer(),
  version_type: Type.Literal('release'),
  status: Type.Union([Type.Literal('listed'), Type.Literal('archived')], { description: '"archived": yanked; never an update.' }),
  requested_status: Type.Null(),
  files: Type.Array(ModrinthFile),
  dependencies: Type.Array(Type.Object({}), { maxItems: 0 }),
  game_versions: Type.Array(Type.String(), { description: 'The Minecraft releases its pack.mcmeta declares, oldest first.' }),
  loaders: Type.Array(Type.String(), { description: '"minecraft" for a resource pack, "datapack" for a data pack (Modrinth\'s words).' }),
}, { title: 'ModrinthVersion' })

export const ModrinthGalleryImage = Type.Object({
  url: Type.String(),
  raw_url: Type.String(),
  featured: Type.Boolean(),
  title: Type.Null(),
  description: Type.Null(),
  created: Type.String({ format: 'date-time' }),
  ordering: Type.Integer(),
})

export const ModrinthProject = Type.Object({
  id: Type.String({ description: 'The pack\'s 8-character id.' }),
  slug: Type.String({ description: '"namespace:pack_id": either it or the id names the project in a path.' }),
  project_type: Type.Union([Type.Literal('resourcepack'), Type.Literal('datapack')]),
  team: Type.String({ description: 'The pack\'s team id (its own 8-character id, which never changes, not even when the pack changes owner): GET /v2/team/{id}/members lists its owner and members.' }),
  title: Type.String(),
  description: Type.String({ description: 'The summary.' }),
  body: Type.String({ description: 'The description.' }),
  body_url: Type.Null(),
  published: Type.String({ format: 'date-time' }),
  updated: Type.String({ format: 'date-time' }),
  approved: Type.String({ format: 'date-time' }),
  status: Type.Literal('approved'),
  requested_status: Type.Null(),
  license: Type.Object({ id: Type.String(), name: Type.String(), url: Type.Null() }),
  client_side: Type.String(),
  server_side: Type.String(),
  downloads: Type.Integer(),
  followers: Type.Integer({ description: 'How many people follow the pack on this site.' }),
  categories: Type.Array(Type.String(), { description: 'The category key, then the tags.' }),
  additional_categories: Type.Array(Type.String()),
  versions: Type.Array(Type.String(), { description: 'Version ids, oldest first, as Modrinth lists them.' }),
  game_versions: Type.Array(Type.String()),
  loaders: Type.Array(Type.String()),
  icon_url: Nullable(Type.String()),
  issues_url: Type.Null(),
  source_url: Type.Null(),
  wiki_url: Type.Null(),
  discord_url: Type.Null(),
  donation_urls: Type.Array(Type.Object({}), { maxItems: 0 }),
  gallery: Type.Array(ModrinthGalleryImage),
  color: Type.Null(),
}, { title: 'ModrinthProject' })

export type ModrinthProjectBody = Static<typeof ModrinthProject>

export const ModrinthUser = Type.Object({
  id: Type.String({ description: 'The user\'s id (a UUID here, not Modrinth\'s 8 characters); a version\'s author_id names the owner by it.' }),
  username: Type.String(),
  name: Nullable(Type.String({ description: 'A display name: Packs has none, so always null.' })),
  avatar_url: Nullable(Type.String({ description: 'Packs keeps no avatars: always null.' })),
  bio: Nullable(Type.String({ description: 'Packs keeps no bios: always null.' })),
  created: Type.String({ format: 'date-time' }),
  role: Type.Union([Type.Literal('developer'), Type.Literal('moderator'), Type.Literal('admin')], {
    description: 'The site role: "moderator" for this site\'s staff (who moderate packs and accounts), "developer" for everyone else; "admin" is never given.',
  }),
  badges: Type.Integer({ description: 'Modrinth\'s badge bits: none here, 0.' }),
}, { title: 'ModrinthUser' })

/** Modrinth's project permission bits, as far as Packs has the powers they name (src/packs/policy.ts). */
export const MODRINTH_PERMISSION = {
  UPLOAD_VERSION: 1 << 0,
  DELETE_VERSION: 1 << 1,
  EDIT_DETAILS: 1 << 2,
  EDIT_BODY: 1 << 3,
  MANAGE_INVITES: 1 << 4,
  REMOVE_MEMBER: 1 << 5,
  EDIT_MEMBER: 1 << 6,
  DELETE_PROJECT: 1 << 7,
  VIEW_ANALYTICS: 1 << 8,
  VIEW_PAYOUTS: 1 << 9,
} as const

export const ModrinthTeamMember = Type.Object({
  team_id: Type.String({ description: 'The pack\'s team id: its own 8-character id (a project\'s `team`).' }),
  user: ModrinthUser,
  role: Type.String({ description: '"Owner", "Maintainer" or "Uploader".' }),
  is_owner: Type.Boolean(),
  permissions: Nullable(Type.Integer({
    description: 'Modrinth\'s bit flags (UPLOAD_VERSION 1, DELETE_VERSION 2, EDIT_DETAILS 4, EDIT_BODY 8, MANAGE_INVITES 16, REMOVE_MEMBER 32, '
      + 'EDIT_MEMBER 64, DELETE_PROJECT 128): the owner 255; a maintainer 127 (REMOVE_MEMBER and EDIT_MEMBER reach only uploaders and '
      + 'invitations, not the owner or other maintainers); an uploader 1 (and edits changelogs); an invitation shows what it grants once '
      + 'accepted; a member whose account is disabled 0. VIEW_ANALYTICS and VIEW_PAYOUTS are never set: this site has neither. '
      + 'Shown to the pack\'s team and staff only, as on Modrinth; null for anyone else.',
  })),
  organization_permissions: Type.Null({ description: 'Packs has no organizations.' }),
  accepted: Type.Boolean({ description: 'false: an invitation not answered yet, listed to the pack\'s team and staff only.' }),
  payouts_split: Nullable(Type.Integer({ description: 'Packs pays nothing out: 0 to the team and staff, null for anyone else (as Modrinth hides it).' })),
  ordering: Type.Integer({ description: 'The owner first (0), then members by when they joined, then invitations.' }),
}, { title: 'ModrinthTeamMember' })
export type ModrinthTeamMemberBody = Static<typeof ModrinthTeamMember>

export const TeamRef = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200, description: 'A team id: the `team` of a project (the pack\'s 8-character id).' }),
})
export type ModrinthVersionBody = Static<typeof ModrinthVersion>

export const ProjectRef = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200, description: 'The pack\'s 8-character id, or "namespace:pack_id".' }),
})
export const VersionRef = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, description: 'The version\'s 8-character id.' }) })

/** A JSON array of strings in a query parameter, as Modrinth takes lists: parsed and bounded by the service. */
const JsonList = (description: string) => Type.String({ maxLength: 20_000, description: `${description} A JSON array of strings, at most ${MAX_BATCH_SIZE}.` })

export const IdsQuery = Type.Object({ ids: JsonList('The ids.') })

export const ProjectVersionsQuery = Type.Object({
  loaders: Type.Optional(JsonList('Only versions for one of these loaders ("minecraft": resource packs; "datapack").')),
  game_versions: Type.Optional(JsonList('Only versions that run on one of these Minecraft releases.')),
  featured: Type.Optional(Type.Boolean({ description: 'Packs features no version: true gives an empty list.' })),
})

const Algorithm = Type.Union([Type.Literal('sha1'), Type.Literal('sha256'), Type.Literal('sha512')], {
  description: 'sha1 (the default) or sha256; sha512, which this site does not keep, is a 400 that says so.',
})
const Hash = Type.String({ pattern: '^[0-9A-Fa-f]{1,128}$', description: 'Hex, any case.' })

export const HashRef = Type.Object({ hash: Hash })
export const HashQuery = Type.Object({
  algorithm: Type.Optional(Algorithm),
  multiple: Type.Optional(Type.Boolean({ description: 'Accepted for compatibility; one version is answered either way.' })),
})
export const AlgorithmQuery = Type.Object({ algorithm: Type.Optional(Algorithm) })

const UpdateFilters = {
  loaders: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 50, description: 'Only versions for one of these loaders; none: any.' })),
  game_versions: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 500, description: 'Only versions that run on one of these releases; none: any.' })),
}

export const UpdateFilterBody = Type.Object(UpdateFilters)
export const HashesBody = Type.Object({
  hashes: Type.Array(Hash, { maxItems: MAX_BATCH_SIZE }),
  algorithm: Type.Optional(Algorithm),
})
export const HashesUpdateBody = Type.Object({ ...HashesBody.properties, ...UpdateFilters })

export const VersionsByHash = Type.Record(Type.String(), ModrinthVersion, { description: 'Each hash that matched, as sent, with its version.' })

export const FileLinkParams = Type.Object({ file_id: Type.String({ maxLength: 100, description: 'The stored file\'s id.' }) })
export const FileLinkQuery = Type.Object({
  expires: Type.Integer({ minimum: 0, maximum: 1e11, description: 'Unix time (seconds) the link stops working.' }),
  signature: Type.String({ maxLength: 100 }),
  download: Type.Optional(Type.Literal('1', { description: 'As the file API\'s download=1: an attachment, counted as a download.' })),
})

// ---------------------------------------------------------------- search and tags

/** Bounds on a search's facets (src/modrinth/facets.ts): more than a search box and its filters ever send is a 400. */
export const MAX_FACET_GROUPS = 10
export const MAX_FACET_VALUES = 20
export const MAX_FACET_LENGTH = 200
export const MAX_FACETS_TEXT = 10_000
/** Modrinth's largest page. */
export const MAX_SEARCH_LIMIT = 100

export const SEARCH_INDEXES = ['relevance', 'downloads', 'follows', 'newest', 'updated'] as const

const NotSupportedFilter = (name: string) => Type.Optional(Type.String({
  maxLength: MAX_FACETS_TEXT,
  description: `Modrinth's deprecated raw filter expressions (${name}): not supported here, so only an empty value is taken (some clients always send one); use facets.`,
}))

export const ModrinthSearchQuery = Type.Object({
  query: Type.Optional(Type.String({ maxLength: 500, description: 'Words, searched as GET /api/packs/?q= searches them (prefixes, typos, ranked); none: every listed pack.' })),
  facets: Type.Optional(Type.String({
    maxLength: MAX_FACETS_TEXT,
    description: 'A JSON array of OR-groups that are ANDed, each an array of "type:value" strings, e.g. '
      + '[["categories:adventure","categories:magic"],["versions:1.21.4"],["project_type:resourcepack"]]. Types: '
      + '`categories` (a category key, a tag name in any case, or a loader: "minecraft" for resource packs, "datapack" for data packs), '
      + '`versions` (a Minecraft release name; `game_versions` too), `project_type` ("resourcepack" or "datapack"; `project_types` too), '
      + '`author` (the owner\'s username). A value that names nothing here matches no pack. Only ":" (or "=") is taken: Modrinth\'s '
      + `!=, <, <=, > and >= are a 400, as are other types, bad JSON, more than ${MAX_FACET_GROUPS} groups or ${MAX_FACET_VALUES} values in a group, `
      + 'and a group mixing versions with another type.',
  })),
  index: Type.Optional(Type.Union(SEARCH_INDEXES.map((index) => Type.Literal(index)), {
    description: 'The order: relevance (the default; with no query words, most downloaded first), downloads, follows (sorted as '
      + 'downloads here), newest (most recently published first), updated (most recently updated first).',
  })),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Hits to skip. The first 1,000 hits are reachable, as in the packs listing.' })),
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SEARCH_LIMIT, description: `Hits per answer: 10 by default, at most ${MAX_SEARCH_LIMIT} as on Modrinth.` })),
  filter: NotSupportedFilter('filter'),
  filters: NotSupportedFilter('filters'),
})

export const ModrinthSearchHit = Type.Object({
  project_id: Type.String({ description: 'The pack\'s 8-character id.' }),
  project_type: Type.Union([Type.Literal('resourcepack'), Type.Literal('datapack')], { description: 'As the project\'s: by its newest version\'s kind.' }),
  slug: Type.String({ description: '"namespace:pack_id".' }),
  author: Type.String({ description: 'The owner\'s username.' }),
  title: Type.String(),
  description: Type.String({ description: 'The summary.' }),
  categories: Type.Array(Type.String(), { description: 'The category key, the tags, then the loaders ("minecraft", "datapack"), as Modrinth\'s v2 search lists loaders among categories.' }),
  display_categories: Type.Array(Type.String(), { description: 'The same as categories (this site has no additional categories).' }),
  versions: Type.Array(Type.String(), { description: 'The Minecraft releases its versions run on, oldest first.' }),
  downloads: Type.Integer(),
  follows: Type.Integer({ description: 'How many people follow the pack on this site (the project\'s followers).' }),
  icon_url: Type.String({ description: 'The thumbnail\'s absolute signed link, or "" when there is none (as Modrinth\'s v2 search gives it).' }),
  date_created: Type.String({ format: 'date-time' }),
  date_modified: Type.String({ format: 'date-time' }),
  latest_version: Type.String({ description: 'The id of the newest version that is not yanked.' }),
  license: Type.String({ description: 'A pack names no licence here: "LicenseRef-Unknown".' }),
  client_side: Type.String(),
  server_side: Type.String(),
  gallery: Type.Array(Type.String(), { description: 'The images among the pack\'s media, absolute signed links.' }),
  featured_gallery: Type.Null({ description: 'No image is featured here.' }),
  color: Type.Null(),
}, { title: 'ModrinthSearchHit' })
export type ModrinthSearchHitBody = Static<typeof ModrinthSearchHit>

export const ModrinthSearchResults = Type.Object({
  hits: Type.Array(ModrinthSearchHit),
  offset: Type.Integer(),
  limit: Type.Integer(),
  total_hits: Type.Integer({ description: 'How many packs match, counted up to 1,000 (as the packs listing counts a search).' }),
}, { title: 'ModrinthSearchResults' })

export const ModrinthCategoryTag = Type.Object({
  icon: Type.String({ description: 'An SVG: a dot in the category\'s colour.' }),
  name: Type.String({ description: 'What a `categories` facet takes and a project\'s categories list: a category key or a tag name.' }),
  project_type: Type.Union([Type.Literal('resourcepack'), Type.Literal('datapack')], { description: 'Each entry is listed once per project type: categories and tags apply to both kinds of pack.' }),
  header: Type.String({ description: '"categories" for a category; for a tag, the key of its category (the group a launcher shows it under).' }),
}, { title: 'ModrinthCategoryTag' })
export type ModrinthCategoryTagBody = Static<typeof ModrinthCategoryTag>

export const ModrinthGameVersionTag = Type.Object({
  version: Type.String({ description: 'A Minecraft release this site knows.' }),
  version_type: Type.Literal('release', { description: 'Only releases: the site knows no snapshots.' }),
  date: Type.Null({ description: 'This site keeps no release dates: null (the list is newest first, as Modrinth\'s is).' }),
  major: Type.Boolean({ description: 'true for a release of two numbers (1.21, 26.1), the first of its line.' }),
}, { title: 'ModrinthGameVersionTag' })
export type ModrinthGameVersionTagBody = Static<typeof ModrinthGameVersionTag>

export const GameVersionTagQuery = Type.Object({
  type: Type.Optional(Type.String({ maxLength: 20, description: 'Only versions of this type ("release"; any other: none).' })),
  major: Type.Optional(Type.Boolean({ description: 'Only major (true) or minor (false) releases.' })),
})
