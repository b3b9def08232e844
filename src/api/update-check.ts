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

export type PackLatestBody = Static<typeof PackLatest>
