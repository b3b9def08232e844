// The packs-sync bundle a site serves its players (scripts/build-sync.js
// writes it): the site hands out the client it was built with, so a player
// never fetches it from a package name somebody else could publish first.
// It is read once, at start: it changes only with a new build, and a new
// build is served after a restart anyway, like the rest of the code.
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../config/paths.js'

/** Where `npm run build` writes the bundle (scripts/build-sync.js). */
export const SYNC_CLIENT_BUNDLE = path.join(PROJECT_ROOT, 'packages', 'packs-sync', 'dist', 'packs-sync.mjs')

export interface SyncClientBundle {
  body: Buffer
  size: number
  /** Lower-case hex: what the page shows, the API answers and the ETag carries. */
  sha256: string
}

export type LoadedSyncClient = { bundle: SyncClientBundle } | { bundle: null; reason: string }

/**
 * Reads the bundle. A missing or unreadable one is not a start-up error: the site works without it (only its
 * download answers 404, saying what makes it), so the reason is handed back for the log instead of thrown.
 */
export function loadSyncClient(file: string = SYNC_CLIENT_BUNDLE): LoadedSyncClient {
  let body: Buffer
  try {
    body = fs.readFileSync(file)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    // The usual place, as the build names it; another (a test's) in full.
    const relative = path.relative(PROJECT_ROOT, file)
    const where = relative === '' || relative.startsWith('..') || path.isAbsolute(relative) ? file : relative
    return { bundle: null, reason: code === 'ENOENT' ? `${where} is missing` : `${where} cannot be read (${code ?? String(error)})` }
  }
  return { bundle: { body, size: body.length, sha256: createHash('sha256').update(body).digest('hex') } }
}

/** What the download, the API and the page say when the bundle was not built. */
export const NOT_BUILT_DETAIL = 'packs-sync is not built on this server: whoever runs the site makes it with "npm run build", then restarts the server'
