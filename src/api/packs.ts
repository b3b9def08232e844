// Packs as the API shows them (their mappers: src/packs/mapper.ts).
import { Type, type Static } from 'typebox'
import { MAX_PACKS_PER_PAGE, PACKS_PER_PAGE } from './constants.js'

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
  { url: Type.String(), content_type: Type.String(), filename: Type.String() },
  { title: 'PackMedia' },
)

export const PackVersion = Type.Object(
  {
    name: Type.String(),
    changelog: Type.String(),
    pack_format: PackFormat,
    created_at: DateTime,
    download_url: Type.String({ description: 'Absolute URL that downloads the archive.' }),
  },
  { title: 'PackVersion' },
)

const packCommon = {
  namespace: Type.String({ description: "The owner's username in lower case." }),
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
}

export const Pack = Type.Object(
  {
    ...packCommon,
    description: Type.String(),
    media: Type.Array(PackMedia, { description: 'In upload order.' }),
    versions: Type.Array(PackVersion, { description: 'Newest first.' }),
  },
  { title: 'Pack' },
)

export const PackSummary = Type.Object(
  { ...packCommon, latest_version: PackVersion },
  { title: 'PackSummary' },
)

export const PackList = Type.Object(
  {
    items: Type.Array(PackSummary),
    page: Type.Integer(),
    per_page: Type.Integer(),
    total: Type.Integer({ description: 'Packs matching the filters, on all pages.' }),
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
  q: Type.Optional(Type.String({ description: 'Part of the title, case-insensitive.' })),
  tag: Type.Optional(Type.String({ description: 'Only packs with this tag (name, case-insensitive).' })),
  category: Type.Optional(Type.String({ description: 'Only packs in this category (key).' })),
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PACKS_PER_PAGE, default: PACKS_PER_PAGE })),
})

/** The multipart body of a new version, for the docs; the route reads the parts as a stream. */
export const NewVersionBody = Type.Object({
  file: Type.String({ format: 'binary', description: 'The version archive, a ZIP.' }),
  version_name: Type.String({ description: 'Unique within the pack.' }),
  changelog: Type.Optional(Type.String()),
})

export type PackBody = Static<typeof Pack>
export type PackSummaryBody = Static<typeof PackSummary>
