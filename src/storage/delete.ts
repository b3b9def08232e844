// Deleting stored bytes once nothing refers to them any more: what every use case that removes files does after
// its rows are gone.
import type { FileStore } from './index.js'

/** Where a failed byte delete is reported; the caller's request or sweep logger. */
export interface PurgeLog {
  warn(details: object, message: string): void
}

/**
 * Deletes bytes by their storage keys (files.storage_key, never a file id).
 * Once the rows are gone the deletion has happened as far as anyone can see;
 * bytes that storage failed to drop (it is down) are only unreferenced, and
 * the consistency check (`packs doctor`, also run by the sweep) removes them
 * later. So a failure is logged, not thrown: the client is not told "try
 * again" for a delete that already took effect.
 */
export async function deleteStoredFiles(store: FileStore, keys: readonly string[], log?: PurgeLog): Promise<void> {
  const results = await Promise.allSettled(keys.map((key) => store.delete(key)))
  results.forEach((result, i) => {
    if (result.status === 'rejected') log?.warn({ err: result.reason, key: keys[i] }, 'could not delete stored bytes; the consistency check will remove them')
  })
}
