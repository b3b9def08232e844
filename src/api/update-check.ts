// The in-game update-check's answer (GET /api/packs/{namespace}/{pack_id}/latest).
import { Type, type Static } from 'typebox'
import { ArchiveFields, PackFormat } from './packs.js'

export const PackLatest = Type.Object(
  {
    namespace: Type.String(),
    pack_id: Type.String(),
    name: Type.String({ description: "The pack's title." }),
    version: Type.String({ description: 'Name of the newest version (by publication time).' }),
    pack_format: PackFormat,
    created_at: Type.String({ format: 'date-time', description: 'When that version was published.' }),
    download_url: Type.String({ description: 'Absolute URL that downloads the archive.' }),
    ...ArchiveFields,
  },
  { title: 'PackLatest' },
)

/** Which version fits the player's game (docs/update-protocol.md). Without either, the answer is the plain newest version. */
export const UpdateCheckQuery = Type.Object({
  pack_format: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 2147483647,
    description: 'The game\'s pack format for the pack\'s kind (resource or data): the newest version whose declared range includes it.',
  })),
  game_version: Type.Optional(Type.String({
    // Digits and dots only, at most three numbers: linear to check, and every release name has this shape.
    pattern: '^[0-9]{1,4}(\\.[0-9]{1,4}){1,2}$',
    description: 'A Minecraft release, e.g. 1.21.4 or 26.1: the newest version whose declared formats include that release\'s '
      + '(for the pack\'s kind). A release the site does not know is 404.',
  })),
})

export type PackLatestBody = Static<typeof PackLatest>

/** Most ids (or hashes) one batch may ask about. */
export const MAX_BATCH_SIZE = 200

const GameFields = {
  pack_format: UpdateCheckQuery.properties.pack_format,
  game_version: UpdateCheckQuery.properties.game_version,
}

/** POST /api/update-check/: many packs in one request. */
export const UpdateCheckBatchBody = Type.Object(
  {
    packs: Type.Array(
      // One colon, 1-64 characters either side: linear to check, and long enough for every real namespace and pack id.
      Type.String({ pattern: '^[^:]{1,64}:[^:]{1,64}$', description: 'namespace:pack_id, matched case-insensitively.' }),
      { minItems: 1, maxItems: MAX_BATCH_SIZE, description: `1 to ${MAX_BATCH_SIZE} packs.` },
    ),
    ...GameFields,
  },
  { additionalProperties: false },
)

export const UpdateCheckBatch = Type.Object(
  {
    packs: Type.Record(Type.String(), Type.Union([PackLatest, Type.Null()]), {
      description: 'Each id once, spelt as sent, in the order sent: the single check\'s answer, or null where it would say 404.',
    }),
  },
  { title: 'UpdateCheckBatch' },
)

/** A SHA-1 (40) or SHA-256 (64) in hex, any case. */
const HashString = Type.String({
  pattern: '^([0-9A-Fa-f]{40}|[0-9A-Fa-f]{64})$',
  description: 'The archive\'s SHA-1 (40 hex digits) or SHA-256 (64 hex digits), in any case.',
})

export const HashParams = Type.Object({ hash: HashString })

/** The version an archive on disk is, as the by-hash lookup names it. */
export const HashVersion = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    yanked: Type.Boolean({ description: 'Withdrawn: still what is installed, but never the latest.' }),
    pack_format: PackFormat,
    download_url: Type.String({ description: 'Absolute URL that downloads the archive.' }),
    ...ArchiveFields,
  },
  { title: 'HashVersion' },
)

export const HashMatch = Type.Object(
  {
    hash: Type.String({ description: 'The hash asked about, in lower case.' }),
    algorithm: Type.Union([Type.Literal('sha1'), Type.Literal('sha256')]),
    namespace: Type.String(),
    pack_id: Type.String(),
    version: HashVersion,
    latest: Type.Union([PackLatest, Type.Null()], {
      description: 'What the update-check answers for the pack with the same pack_format / game_version; null where it says 404.',
    }),
  },
  { title: 'HashMatch' },
)

export const HashLookupBatchBody = Type.Object(
  {
    hashes: Type.Array(HashString, { minItems: 1, maxItems: MAX_BATCH_SIZE, description: `1 to ${MAX_BATCH_SIZE} hashes, SHA-1 and SHA-256 mixed.` }),
    ...GameFields,
  },
  { additionalProperties: false },
)

export const HashLookupBatch = Type.Object(
  {
    hashes: Type.Record(Type.String(), Type.Union([HashMatch, Type.Null()]), {
      description: 'Each hash once, spelt as sent, in the order sent: its match, or null where the single lookup would say 404.',
    }),
  },
  { title: 'HashLookupBatch' },
)

export type HashMatchBody = Static<typeof HashMatch>
export type HashVersionBody = Static<typeof HashVersion>
