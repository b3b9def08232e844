// The in-game update-check's answer (SPEC: GET /api/packs/{namespace}/{pack_id}/latest).
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

/** CONTRACT §7: which version fits the player's game. Without either, the answer is exactly SPEC's. */
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
