// The packs-sync client each site serves (src/sync-client/): where it is and
// what it is, for a launcher or a script that fetches it
// (GET /api/packs-sync/), and the addresses the pages link to.
import { Type, type Static } from 'typebox'

/** The name the bundle is served and saved under. */
export const SYNC_CLIENT_FILENAME = 'packs-sync.mjs'
/** The page that tells players how to fetch and run it. */
export const SYNC_CLIENT_PAGE = '/packs-sync/'
/** The bundle's own address. */
export const SYNC_CLIENT_PATH = `/packs-sync/${SYNC_CLIENT_FILENAME}`

export const SyncClient = Type.Object(
  {
    filename: Type.String({ description: `The name to save it under: ${SYNC_CLIENT_FILENAME}.` }),
    size: Type.Integer({ minimum: 0, description: 'Its size in bytes.' }),
    sha256: Type.String({ description: 'SHA-256 of its bytes, lower-case hex: compare it with the file you downloaded before running it. Also its ETag.' }),
    url: Type.String({
      description: 'Absolute URL of the file (PACKS_BASE_URL, else the request\'s own origin). Behind the gate like every page: '
        + 'send X-Master-Password (or a token, or the gate cookie).',
    }),
  },
  { title: 'SyncClient' },
)

export type SyncClientBody = Static<typeof SyncClient>
