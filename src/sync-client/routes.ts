// The packs-sync client, served by the site it talks to:
//   GET|HEAD /packs-sync/packs-sync.mjs  its bytes, as a download (the page /packs-sync/ links it, src/pages/sync-client.ts);
//   GET /api/packs-sync/                 its name, size, SHA-256 and URL, for launchers and scripts.
// Both sit behind the gate, like every page and file.
import type { App } from '../http/types.js'
import { NotFound } from '../errors.js'
import { errorResponses } from '../api/common.js'
import { SYNC_CLIENT_FILENAME, SYNC_CLIENT_PATH, SyncClient, type SyncClientBody } from '../api/sync-client.js'
import { noneMatch } from '../http/conditional.js'
import { publicOrigin } from '../http/urls.js'
import { FILE_CSP } from '../files/routes.js'
import { NOT_BUILT_DETAIL } from './bundle.js'

// The URL stays the same when a new build changes the bytes, so a client keeps a copy only to revalidate it
// (the ETag, 304); `private` because it sits behind the gate.
const CACHE_CONTROL = 'private, no-cache'

export default async function syncClientRoutes(app: App): Promise<void> {
  const bundle = app.syncClient
  // The ETag is the SHA-256 the page shows: strong, since it names these exact bytes.
  const etag = bundle ? `"${bundle.sha256}"` : ''

  // Fastify answers HEAD from this route too (no body; the same headers and Content-Length): the bytes are in memory.
  app.get(SYNC_CLIENT_PATH, { schema: { hide: true } }, async (request, reply) => {
    if (!bundle) throw new NotFound(NOT_BUILT_DETAIL)
    // A download, never a document or a script of this site, whatever a browser makes of it: the stored files' sandbox,
    // and other origins may not load it (with a visitor's gate cookie) at all.
    reply.headers({
      etag,
      'cache-control': CACHE_CONTROL,
      'content-security-policy': FILE_CSP,
      'cross-origin-resource-policy': 'same-origin',
    })
    if (noneMatch(request.headers['if-none-match'], etag)) return reply.code(304).send()
    return reply
      .header('content-type', 'text/javascript; charset=utf-8')
      .header('content-disposition', `attachment; filename="${SYNC_CLIENT_FILENAME}"`)
      .send(bundle.body)
  })

  app.get('/api/packs-sync/', {
    schema: {
      summary: 'The packs-sync client',
      description: 'Where to download packs-sync, the command-line client that keeps a folder of packs up to date from this site '
        + '(docs/update-protocol.md), and what to check it against: every site serves the client it was built with at '
        + `${SYNC_CLIENT_PATH}, as a download behind the gate (ETag: its SHA-256 in quotes; If-None-Match gives 304). `
        + 'Run it with Node.js alone: node packs-sync.mjs <folder> --site <this site> --game-version <release>. '
        + '404 when the server was started without building it (npm run build makes it).',
      tags: ['update-check'],
      response: { 200: SyncClient, ...errorResponses(401, 404) },
    },
  }, async (request): Promise<SyncClientBody> => {
    if (!bundle) throw new NotFound(NOT_BUILT_DETAIL)
    return {
      filename: SYNC_CLIENT_FILENAME,
      size: bundle.size,
      sha256: bundle.sha256,
      url: `${publicOrigin(app.config, request)}${SYNC_CLIENT_PATH}`,
    }
  })
}
