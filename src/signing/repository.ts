// The site's signing keys live in the settings table beside the site secret
// (one row, `signing_keys`, a JSON document), so `packs export` / `packs
// import` move them with it and every instance reads the same keys.
import type { Db } from '../db/index.js'

const SIGNING_KEYS = 'signing_keys'

export async function readSigningKeys(db: Db): Promise<string | undefined> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', SIGNING_KEYS).executeTakeFirst()
  return row?.value
}

/** Stores the first keys unless another instance did first; returns what is stored. */
export async function createSigningKeys(db: Db, value: string): Promise<string> {
  await db.insertInto('settings').values({ key: SIGNING_KEYS, value }).onConflict((oc) => oc.column('key').doNothing()).execute()
  return (await readSigningKeys(db))!
}

/**
 * Replaces the keys only if they are still `expected`: two rotations at once
 * must not both succeed, or the first new key would vanish unendorsed.
 */
export async function replaceSigningKeys(db: Db, expected: string, value: string): Promise<boolean> {
  const result = await db.updateTable('settings').set({ value }).where('key', '=', SIGNING_KEYS).where('value', '=', expected).executeTakeFirst()
  return Number(result.numUpdatedRows) === 1
}
