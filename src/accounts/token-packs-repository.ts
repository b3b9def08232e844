// The packs a publish token names (token_packs): finding them by name when a
// token is made (its owner's packs, and those of teams they are in), and naming them again (current names)
// when tokens are listed.
import type { ExpressionBuilder } from 'kysely'
import type { Db } from '../db/index.js'
import type { Database } from '../db/schema.js'

export interface NamedPack {
  namespace: string
  packId: string
}

export interface FoundPack extends NamedPack {
  id: string
  ownerId: string
  /** The user asked about owns it or is in its team (accepted): every role may publish versions (src/packs/policy.ts). */
  publishable: boolean
}

export async function insertTokenPacks(db: Db, tokenId: string, packRowIds: readonly string[]): Promise<void> {
  if (packRowIds.length === 0) return
  await db.insertInto('token_packs').values(packRowIds.map((packRowId) => ({ token_id: tokenId, pack_id: packRowId }))).execute()
}

/** The packs with these exact (lower-case) names that exist, whoever owns them, and whether `userId` may publish to each; one query. */
export async function findPacksByNames(db: Db, names: readonly NamedPack[], userId: string): Promise<FoundPack[]> {
  if (names.length === 0) return []
  const rows = await db
    .selectFrom('packs')
    .select((eb) => ['id', 'namespace', 'pack_id', 'owner_id', memberOf(eb, userId).as('member')])
    .where((eb) => eb.or(names.map((name) => eb.and([eb('namespace', '=', name.namespace), eb('pack_id', '=', name.packId)]))))
    .execute()
  return rows.map((row) => ({
    id: row.id, namespace: row.namespace, packId: row.pack_id, ownerId: row.owner_id, publishable: row.owner_id === userId || row.member !== null,
  }))
}

/** The user's accepted place in the pack's team (a row when there is one). */
function memberOf(eb: ExpressionBuilder<Database, 'packs'>, userId: string) {
  return eb.selectFrom('pack_members').select('pack_members.role')
    .whereRef('pack_members.pack_row_id', '=', 'packs.id').where('pack_members.user_id', '=', userId).where('pack_members.accepted_at', 'is not', null)
}

/**
 * The current names of the packs each of the user's live (not revoked) tokens
 * names, by token id, in name order: one query by the owner, however many
 * tokens there are. A pack deleted since is gone from token_packs with it
 * (ON DELETE CASCADE), so it is simply not listed.
 */
export async function listUserTokenPackNames(db: Db, userId: string): Promise<Map<string, NamedPack[]>> {
  const rows = await db
    .selectFrom('token_packs')
    .innerJoin('api_tokens', 'api_tokens.id', 'token_packs.token_id')
    .innerJoin('packs', 'packs.id', 'token_packs.pack_id')
    .select(['token_packs.token_id', 'packs.namespace', 'packs.pack_id'])
    .where('api_tokens.user_id', '=', userId)
    .where('api_tokens.revoked_at', 'is', null)
    .orderBy('packs.namespace')
    .orderBy('packs.pack_id')
    .execute()
  const byToken = new Map<string, NamedPack[]>()
  for (const row of rows) {
    const list = byToken.get(row.token_id) ?? []
    list.push({ namespace: row.namespace, packId: row.pack_id })
    byToken.set(row.token_id, list)
  }
  return byToken
}

/**
 * The packs `userId` owns or is in the team of (hidden ones too: their team still releases them), by title, for
 * the settings page's choice.
 */
export async function listPublishablePackNames(db: Db, userId: string): Promise<Array<NamedPack & { title: string }>> {
  const rows = await db
    .selectFrom('packs')
    .select(['namespace', 'pack_id', 'title'])
    .where((eb) => eb.or([eb('owner_id', '=', userId), eb.exists(memberOf(eb, userId))]))
    .orderBy('title')
    .orderBy('pack_id')
    .execute()
  return rows.map((row) => ({ namespace: row.namespace, packId: row.pack_id, title: row.title }))
}
