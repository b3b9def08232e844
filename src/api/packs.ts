// Packs as the API shows them (their mappers: src/packs/mapper.ts).
import { Type, type Static } from 'typebox'
import { MAX_PACKS_PER_PAGE, MAX_SEARCH_LENGTH, PACKS_PER_PAGE } from './constants.js'

const DateTime = Type.String({ format: 'date-time' })
export const PackFormat = Type.Union([Type.Integer(), Type.Null()], {
  description: 'From pack.mcmeta at the archive root: pack.pack_format, or the major number of pack.max_format (1.21.9+); null when absent or unreadable.',
})

export const Category = Type.Object(
  { key: Type.String(), name: Type.String(), color: Type.String() },
  { title: 'Category' },
)

export const PackTag = Type.Object(
  { name: Type.String(), category: Type.String({ description: 'The category key.' }), category_name: Type.String(), color: Type.String() },
  { title: 'PackTag' },
)

export const PackMedia = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'The stored file\'s id: what an edit names to keep, reorder or remove this item.' }),
    url: Type.String(),
    content_type: Type.String(),
    filename: Type.String(),
  },
  { title: 'PackMedia' },
)

/** What an updater checks a download against (docs/update-protocol.md): the archive's size, hashes and name. */
export const ArchiveFields = {
  size: Type.Integer({ minimum: 0, description: 'The archive\'s size in bytes.' }),
  sha256: Type.String({ description: 'SHA-256 of the archive, lower-case hex.' }),
  sha1: Type.Union([Type.String(), Type.Null()], {
    description: 'SHA-1 of the archive, lower-case hex (what a vanilla server\'s resource-pack-sha1 and most launchers check); '
      + 'null only for an archive stored before SHA-1s were kept, until the start-up back-fill has read it.',
  }),
  filename: Type.String({ description: 'The archive\'s file name, as uploaded (cleaned).' }),
}

/** A format as pack.mcmeta writes it: [major] or [major, minor]. */
const FormatNumber = Type.Array(Type.Integer({ minimum: 0 }), {
  minItems: 1,
  maxItems: 2,
  description: '[major] or [major, minor], as pack.mcmeta writes it. In max_format, [major] alone means any minor of that major.',
})

export const PackVersion = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Names the version in the version endpoints.' }),
    name: Type.String(),
    changelog: Type.String(),
    pack_format: PackFormat,
    created_at: DateTime,
    download_url: Type.String({ description: 'Absolute URL that downloads the archive.' }),
    ...ArchiveFields,
    yanked: Type.Boolean({ description: 'Withdrawn by its owner or staff: still downloadable by download_url, but never the latest version.' }),
    downloads: Type.Integer({ description: 'Downloads with download=1, at most one per client address per UTC day.' }),
    pack_kind: Type.Union([Type.Literal('resource'), Type.Literal('data'), Type.Null()], {
      description: 'resource: the archive has assets/; data: it has data/; null: neither, or both.',
    }),
    min_format: Type.Union([FormatNumber, Type.Null()], {
      description: 'Lowest pack format pack.mcmeta declares (min_format, else supported_formats, else pack_format; [major] is minor 0); null when it declares none.',
    }),
    max_format: Type.Union([FormatNumber, Type.Null()], {
      description: 'Highest pack format pack.mcmeta declares ([major] is any minor of that major); null when it declares none.',
    }),
    minecraft_versions: Type.Array(Type.String(), {
      description: 'Minecraft releases whose pack format for this kind lies in the range, oldest first; empty when none is known.',
    }),
    minecraft_label: Type.String({
      description: 'The range in words, as the pages show it: "Minecraft 1.21.4 – 1.21.8", or "pack format 99 (unknown Minecraft version)".',
    }),
  },
  { title: 'PackVersion' },
)

const packCommon = {
  namespace: Type.String({ description: "The username, in lower case, of whoever published the pack; it never changes, not even when the pack changes hands." }),
  pack_id: Type.String({ description: 'Slug of the title, [a-z0-9_-].' }),
  id: Type.String({ description: 'namespace:pack_id' }),
  title: Type.String(),
  summary: Type.String(),
  category: Type.Union([Category, Type.Null()]),
  tags: Type.Array(PackTag),
  owner: Type.String({ description: "The owner's username." }),
  thumbnail_url: Type.Union([Type.String(), Type.Null()]),
  created_at: DateTime,
  updated_at: DateTime,
  hidden: Type.Boolean({ description: 'Hidden by staff, or its owner\'s account is disabled: only the owner and staff see it.' }),
  downloads: Type.Integer({ description: 'Sum of its versions\' downloads.' }),
  revision: Type.Integer({ description: 'Counts edits of the pack\'s page fields; an edit sends the revision it started from.' }),
}

export const Pack = Type.Object(
  {
    ...packCommon,
    description: Type.String(),
    media: Type.Array(PackMedia, { description: 'In upload order.' }),
    versions: Type.Array(PackVersion, { description: 'Newest first, yanked ones included (marked).' }),
    team: Type.Array(Type.Object({
      username: Type.String(),
      role: Type.Union([Type.Literal('maintainer'), Type.Literal('uploader')]),
    }), { description: 'Who works on the pack besides its owner, by when they joined (GET …/team/ has the details and open invitations).' }),
    followers: Type.Integer({ minimum: 0, description: 'How many people follow the pack (POST …/follow/): they hear of its new versions.' }),
  },
  { title: 'Pack' },
)

export const PackSummary = Type.Object(
  {
    ...packCommon,
    latest_version: Type.Union([PackVersion, Type.Null()], { description: 'The newest version that is not yanked; null when every version is yanked.' }),
  },
  { title: 'PackSummary' },
)

const FacetOptions = Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() }))

export const PackFacets = Type.Object({
  kind: FacetOptions,
  mc: Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() }), { description: 'Minecraft releases, newest first.' }),
  categories: Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() }), { description: 'Category keys, most packs first.' }),
  tags: Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() }), { description: 'The 30 tags on most of the packs found.' }),
  updated: Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() }), { description: 'week, month and year.' }),
}, { title: 'PackFacets', description: 'Each option\'s count is how many packs the search would find with that option chosen and the other filters as they are.' })

export const PackList = Type.Object(
  {
    items: Type.Array(PackSummary),
    page: Type.Integer(),
    per_page: Type.Integer(),
    total: Type.Integer({ description: 'Packs matching the filters, on all pages. A title search (q) counts its first 1,000 matches only: see total_capped.' }),
    total_capped: Type.Boolean({
      description: 'True when a title search matches more packs than the 1,000 it counts and pages through (total is then 1,000, and pages '
        + 'past them are empty): narrow the search, or add a tag or category.',
    }),
    facets: Type.Optional(PackFacets),
  },
  { title: 'PackList' },
)

export const PackParams = Type.Object({
  namespace: Type.String({ description: 'Matched case-insensitively.' }),
  pack_id: Type.String({ description: 'Matched case-insensitively.' }),
})

/**
 * Far past any real listing, and small enough that (page - 1) * per_page stays
 * an exact integer both databases accept as an OFFSET: page=1e300 is a whole
 * number too, and the databases failed on its offset. (Text that is not
 * decimal digits, "Infinity" included, is refused before validation:
 * src/http/text-input.ts.)
 */
export const MAX_PAGE = 100_000

export const PackListQuery = Type.Object({
  q: Type.Optional(Type.String({
    maxLength: MAX_SEARCH_LENGTH,
    description: 'Words to search for, in any case and with or without accents: in the title, the owner\'s and team\'s usernames, '
      + 'tags, category, summary and description, most relevant first (unless sort says otherwise). Each word also matches as the '
      + 'start of a word ("drag" finds "Dragon"); a word of 5 letters or more that finds nothing as typed matches words one typing '
      + 'mistake away, 9 or more two ("dargon" finds "Dragon"). Every word must match. Packs whose owner or an accepted team member '
      + 'has a username equal to q or starting with it (any case, an "@" before it dropped: "@bob", "ann-m") match as well; a '
      + 'pending invitation does not count. The first 1,000 matches are counted and paged (total_capped).',
  })),
  tag: Type.Optional(Type.String({ description: 'Only packs with this tag (name, case-insensitive).' })),
  category: Type.Optional(Type.String({ description: 'Only packs in this category (key).' })),
  member: Type.Optional(Type.String({ maxLength: 64, description: 'Only packs this user (username, case-insensitive) owns or is in the team of.' })),
  owner: Type.Optional(Type.String({ maxLength: 64, description: 'Only packs this user (username, case-insensitive) owns.' })),
  kind: Type.Optional(Type.Union([Type.Literal('resource'), Type.Literal('data')], {
    description: 'Only resource packs or data packs: packs with a public (not yanked) version of that kind.',
  })),
  mc: Type.Optional(Type.String({
    maxLength: 40,
    description: 'Only packs with a public version that runs on this Minecraft release (1.21.4) or on one in this range: '
      + '>=1.21, >1.21, <=1.20.6, <1.21, or 1.20.1..1.21.4 (both ends included).',
  })),
  categories: Type.Optional(Type.String({ maxLength: 1000, description: 'Category keys, comma-separated: packs in any of them.' })),
  tags: Type.Optional(Type.String({ maxLength: 1000, description: 'Tag names, comma-separated: packs with all of them.' })),
  updated: Type.Optional(Type.Union([Type.Literal('week'), Type.Literal('month'), Type.Literal('year')], {
    description: 'Only packs updated in the last 7, 30 or 365 days.',
  })),
  facets: Type.Optional(Type.Union([Type.Boolean(), Type.Literal('1'), Type.Literal('0')], {
    description: 'true (or 1): the answer also has facets, each filter\'s options with how many packs each would leave with the '
      + 'other filters as they are.',
  })),
  sort: Type.Optional(Type.Union([
    Type.Literal('relevance'), Type.Literal('updated'), Type.Literal('downloads'), Type.Literal('trending'), Type.Literal('created'), Type.Literal('title'),
  ], {
    description: 'relevance: best match first (the default when q has words); updated: most recently updated first (the default '
      + 'otherwise); downloads: most downloaded first; trending: most downloads in the last 7 days first; created: newest packs '
      + 'first; title: by title, A to Z.',
  })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PACKS_PER_PAGE, default: PACKS_PER_PAGE })),
})

/** The multipart body of a new version, for the docs; the route reads the parts as a stream. */
export const NewVersionBody = Type.Object({
  file: Type.String({ format: 'binary', description: 'The version archive, a ZIP.' }),
  version_name: Type.String({ description: 'Unique within the pack.' }),
  changelog: Type.Optional(Type.String()),
})

export const VersionParams = Type.Object({
  ...PackParams.properties,
  version_id: Type.String({ description: 'The version\'s id (a UUID).' }),
})

/** The longest summary (trimmed): one line in lists, as the create page's field allows. */
export const MAX_SUMMARY_LENGTH = 300
/**
 * The longest description an edit sets (Markdown). Longer than any real one; a pack created with a longer one
 * (a draft may hold up to its 256 KiB body) keeps it, and may send it back unchanged.
 */
export const MAX_DESCRIPTION_LENGTH = 100_000
/** A revision is a PostgreSQL integer: anything larger names no revision, and must not reach the database. */
const MAX_REVISION = 2_147_483_647

/**
 * An edit of the pack's page (PATCH). Fields left out stay as they are; the
 * pack_id never changes (every player's mod asks for it).
 */
export const EditPackBody = Type.Object(
  {
    revision: Type.Integer({
      minimum: 1,
      maximum: MAX_REVISION,
      description: 'The revision the edit started from (the pack\'s `revision`). If the pack was edited since (another tab, '
        + 'another person): 409, and nothing changes; reload the pack and edit again.',
    }),
    title: Type.Optional(Type.String({ description: 'Trimmed; 1 to 200 characters. The pack_id stays as it is.' })),
    summary: Type.Optional(Type.String({ description: `Trimmed; at most ${MAX_SUMMARY_LENGTH} characters.` })),
    description: Type.Optional(Type.String({ description: `Markdown; at most ${MAX_DESCRIPTION_LENGTH} characters.` })),
    category: Type.Optional(Type.Unsafe<string | null>({
      type: 'string', nullable: true, description: 'A category key (unknown keys are a 400); null or "" for none.',
    })),
    tags: Type.Optional(Type.Array(Type.String(), {
      description: 'The pack\'s tags, all of them: names of the site\'s tags, case-insensitive (unknown names are a 400 naming them).',
    })),
    thumbnail: Type.Optional(Type.Unsafe<string | null>({
      type: 'string',
      nullable: true,
      description: 'The id of a pending thumbnail upload of yours (POST /api/uploads/, kind thumbnail, with or without a draft) '
        + 'to use; null removes the thumbnail. The old thumbnail\'s file is deleted.',
    })),
    media: Type.Optional(Type.Array(Type.String(), {
      description: 'The whole gallery in its new order: ids of the pack\'s media (PackMedia.id, to keep) and of pending media '
        + 'uploads of yours (to add). Media left out are removed, their files too. Unknown or repeated ids are a 400.',
    })),
  },
  { additionalProperties: false, title: 'EditPack' },
)

/** A change to one version (PATCH). */
export const EditVersionBody = Type.Object(
  {
    changelog: Type.Optional(Type.String({ description: 'Markdown, at most 20,000 characters.' })),
    yanked: Type.Optional(Type.Boolean({ description: 'true yanks the version, false un-yanks it; asking for what already is changes nothing.' })),
  },
  { additionalProperties: false, title: 'EditVersion' },
)

/** Staff hiding a pack or disabling an account say why; the audit log keeps it. */
export const ModerationBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 500, description: 'Why, for the audit log.' })) },
  { additionalProperties: false },
)

export type PackBody = Static<typeof Pack>
export type PackSummaryBody = Static<typeof PackSummary>
