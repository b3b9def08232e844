// The packs' listing as it scales (migration 0007): totals
// kept by triggers follow every change of what is listed, the title search's
// index follows every title, and a search counts and reaches its first
// SEARCH_LIMIT matches. Runs on both combinations: SQLite (its FTS5 trigram
// index) and PostgreSQL (pg_trgm).
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { PostgresAdapter, sql } from 'kysely'
import { SEARCH_LIMIT } from '../../src/packs/repository.js'
import { indexMissingPacks } from '../../src/packs/search-service.js'
import { insertRows } from '../../src/maintenance/transfer-repository.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack, seedTags, type PackJson } from '../helpers/packs.js'

interface ListJson { items: PackJson[]; total: number; total_capped: boolean }

let site: TestSite
let owner: TestUser
let other: TestUser
let mod: TestUser
before(async () => {
  ({ site, owner, other, mod } = await siteWith({ users: ['owner', 'other'], staff: ['mod'] }))
  await seedTags(site)
})
after(() => site.close())

const list = async (query: Record<string, string> = {}): Promise<ListJson> => {
  const res = await site.app.inject({ url: '/api/packs/', query, headers: site.gate })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as ListJson
}
const post = (url: string, headers: Record<string, string>, payload: object = {}) => site.app.inject({ method: 'POST', url, headers, payload })
const packUrl = (pack: PackJson) => `/api/packs/${pack.namespace}/${pack.pack_id}/`

describe('listing totals', () => {
  test('follow publishing, hiding, a disabled owner, a category change and deletion, in all and per category', async () => {
    const all0 = (await list()).total
    const theme0 = (await list({ category: 'theme' })).total
    const a = await publishPack(site, owner, { title: 'Counted One', category: 'theme' })
    const b = await publishPack(site, other, { title: 'Counted Two', category: 'theme' })
    const c = await publishPack(site, other, { title: 'Counted Three' })
    const expect = async (all: number, theme: number, why: string) => {
      assert.equal((await list()).total, all0 + all, `all: ${why}`)
      assert.equal((await list({ category: 'theme' })).total, theme0 + theme, `theme: ${why}`)
      assert.equal((await list({ category: 'kind' })).total, (await list({ category: 'kind', per_page: '100' })).items.length, `kind: ${why}`)
    }
    await expect(3, 2, 'three published')

    assert.equal((await post(`${packUrl(a)}hide/`, mod.headers, { reason: 'test' })).statusCode, 200)
    await expect(2, 1, 'one hidden')
    assert.equal((await post(`${packUrl(a)}unhide/`, mod.headers, { reason: 'test' })).statusCode, 200)
    await expect(3, 2, 'unhidden')

    assert.equal((await post('/api/users/other/disable/', mod.headers, { reason: 'test' })).statusCode, 200)
    await expect(1, 1, 'the owner of two disabled')
    assert.deepEqual((await list({ q: 'Counted' })).items.map((p) => p.title), ['Counted One'])
    assert.equal((await post('/api/users/other/enable/', mod.headers, { reason: 'test' })).statusCode, 200)
    await expect(3, 2, 'enabled again')

    const moved = await site.app.inject({ method: 'PATCH', url: packUrl(b), headers: other.headers, payload: { revision: b.revision, category: 'kind' } })
    assert.equal(moved.statusCode, 200, moved.body)
    await expect(3, 1, 'one moved to another category')

    assert.equal((await site.app.inject({ method: 'DELETE', url: packUrl(c), headers: other.headers })).statusCode, 204)
    await expect(2, 1, 'one deleted')
  })
})

describe('title search', () => {
  test('has its index on either engine: FTS5 trigram on SQLite, pg_trgm on PostgreSQL', async () => {
    const db = site.app.db
    const found = db.getExecutor().adapter instanceof PostgresAdapter
      ? await sql`select indexname from pg_indexes where indexname = 'packs_title_trgm'`.execute(db)
      : await sql`select name from sqlite_master where name = 'packs_title_search'`.execute(db)
    assert.equal(found.rows.length, 1)
  })

  test('the index follows a title change and a deletion; short and special-character terms still match', async () => {
    const pack = await publishPack(site, owner, { title: 'Quixotic Lanterns' })
    assert.deepEqual((await list({ q: 'quix lant' })).items.map((p) => p.id), [`${pack.namespace}:${pack.pack_id}`])
    const renamed = await site.app.inject({ method: 'PATCH', url: packUrl(pack), headers: owner.headers, payload: { revision: pack.revision, title: 'Zephyrine Lamps' } })
    assert.equal(renamed.statusCode, 200, renamed.body)
    assert.equal((await list({ q: 'quixotic' })).total, 0, 'the old title no longer matches')
    assert.equal((await list({ q: 'ZEPHYRINE' })).total, 1, 'the new one does, in any case')
    assert.equal((await list({ q: 'ze' })).total, 1, 'two letters: the start of a word')
    assert.equal((await list({ q: 'zeph LAMPS' })).total, 1)
    assert.equal((await list({ q: 'ine L' })).total, 0, 'the middle of a word is no word')
    assert.equal(((await site.app.inject({ method: 'DELETE', url: packUrl(pack), headers: owner.headers })).statusCode), 204)
    assert.equal((await list({ q: 'zephyrine' })).total, 0)
  })

  test(`a search matching more than ${SEARCH_LIMIT} packs counts and pages through the first ${SEARCH_LIMIT}`, async () => {
    // Rows made directly through the repositories' bulk insert (as an import writes them): publishing a
    // thousand packs over HTTP would take most of a minute and show nothing more.
    const now = Date.now()
    const ownerId = (await site.app.db.selectFrom('users').select('id').where('username', '=', 'owner').executeTakeFirstOrThrow()).id
    const rows = Array.from({ length: SEARCH_LIMIT + 50 }, (_, i) => ({
      id: randomUUID(), namespace: 'owner', pack_id: `common-${i}`, owner_id: ownerId, title: `Commonplace ${i}`, summary: '', description: '',
      category_id: null, thumbnail_file_id: null, created_at: new Date(now - i * 1000).toISOString(), updated_at: new Date(now - i * 1000).toISOString(),
      hidden_at: null, short_id: null,
    }))
    await site.app.db.transaction().execute((trx) => insertRows(trx, 'packs', rows as never))
    // Search reads packs with a public version (and, as after an import, indexes rows it has not seen).
    const version = (await publishPack(site, owner, { title: 'Commonplace but rare: Vexillology' })).versions[0]!
    await site.app.db.insertInto('versions').values(rows.map((row) => ({
      id: randomUUID(), pack_id: row.id, name: '1', changelog: '', pack_format: null,
      file_id: (site.app.db.selectFrom('versions').select('file_id').where('id', '=', version.id)) as never, created_at: row.created_at,
    }))).execute()
    assert.equal(await indexMissingPacks(site.app.db), SEARCH_LIMIT + 50)

    const first = await list({ q: 'commonplace', sort: 'updated' })
    assert.equal(first.total, SEARCH_LIMIT)
    assert.equal(first.total_capped, true)
    assert.equal(first.items[0]!.title, 'Commonplace but rare: Vexillology', 'newest first')
    const last = await list({ q: 'commonplace', per_page: '100', page: String(SEARCH_LIMIT / 100) })
    assert.equal(last.items.length, 100)
    assert.deepEqual((await list({ q: 'commonplace', per_page: '100', page: String(SEARCH_LIMIT / 100 + 1) })).items, [])

    const rare = await list({ q: 'vexillology' })
    assert.deepEqual([rare.total, rare.total_capped], [1, false])
    const unfiltered = await list()
    assert.equal(unfiltered.total_capped, false)
    assert.ok(unfiltered.total > SEARCH_LIMIT, 'the listing without a search counts everything')

    // Two characters, as the start of a word: the answer must be what a full scan gives, every listed title with
    // a word starting "49", newest first when sorted so.
    const everything: { id: string; title: string }[] = []
    for (let n = 1; ; n++) {
      const got = await list({ per_page: '100', page: String(n) })
      everything.push(...got.items)
      if (got.items.length < 100) break
    }
    const expected = everything.filter((p) => /\b49/.test(p.title)).map((p) => p.id)
    assert.ok(expected.includes('owner:common-49') && expected.includes('owner:common-499'))
    assert.ok(!expected.includes('owner:common-1049'), 'the middle of a word does not match')
    const short = await list({ q: '49', per_page: '100', sort: 'updated' })
    assert.deepEqual([short.total, short.total_capped], [expected.length, false])
    assert.deepEqual(short.items.map((p) => p.id), expected)
    // The other orders walk their own keys (downloads, then updated; created): every download count here is 0
    // and creation follows the update, so the same packs come in the same order.
    for (const sort of ['downloads', 'created']) {
      assert.deepEqual((await list({ q: '49', per_page: '100', sort })).items.map((p) => p.id), expected, `sort=${sort}`)
    }
    const shortCommon = await list({ q: 'co', sort: 'updated' })
    assert.deepEqual([shortCommon.total, shortCommon.total_capped], [SEARCH_LIMIT, true])
    assert.equal(shortCommon.items[0]!.title, 'Commonplace but rare: Vexillology', 'newest first')
    assert.equal((await list({ q: 'co', per_page: '100', page: String(SEARCH_LIMIT / 100) })).items.length, 100)

    const page = await site.app.inject({ url: '/?q=commonplace', headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(page.statusCode, 200)
    assert.match(page.body, new RegExp(`${SEARCH_LIMIT.toLocaleString('en-US')}\\+ packs matching “commonplace”`))
    const past = await site.app.inject({ url: `/?q=commonplace&page=${SEARCH_LIMIT / 20 + 1}`, headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(past.statusCode, 404)
    assert.match(past.body, /the last one is page 50/)
  })
})

describe('heavy reads take turns (src/http/bulkhead.ts)', () => {
  test('many at once all answer, in turns, and every slot is given back', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => i % 2
      ? site.app.inject({ url: '/api/packs/', query: { q: 'count' }, headers: site.gate })
      : site.app.inject({ url: '/', headers: { ...site.gate, accept: 'text/html' } })))
    assert.deepEqual(new Set(answers.map((a) => a.statusCode)), new Set([200]))
    assert.equal(site.app.bulkhead.inProgress, 0)
    assert.equal(site.app.bulkhead.queued, 0)
    // The update-check is not one of them.
    assert.equal((await site.app.inject({ url: '/api/packs/owner/none/latest', headers: site.gate })).statusCode, 404)
    assert.equal(site.app.bulkhead.inProgress, 0)
  })

  test('a full line is a 503 with Retry-After and a detail, at once; the update-check still answers', async () => {
    const line = site.app.bulkhead
    const held = await Promise.all(Array.from({ length: line.slots }, () => line.acquire(() => {})))
    const waiting = Array.from({ length: line.queueLimit }, () => line.acquire(() => {}))
    assert.equal(line.queued, line.queueLimit)
    const refused = await site.app.inject({ url: '/api/packs/', query: { q: 'x'.repeat(200) }, headers: site.gate })
    assert.equal(refused.statusCode, 503)
    assert.equal(refused.headers['retry-after'], '1')
    assert.match((refused.json() as { detail: string }).detail, /busy/)
    assert.equal((await site.app.inject({ url: '/api/packs/owner/none/latest', headers: site.gate })).statusCode, 404)
    // Each waiter, once it has its slot, gives it back to the next.
    const drained = Promise.all(waiting.map(async (granted) => (await granted)!()))
    for (const release of held) release!()
    await drained
    assert.equal(line.inProgress, 0)
    assert.equal((await site.app.inject({ url: '/api/packs/', headers: site.gate })).statusCode, 200)
  })

  test('a search longer than 200 characters is a 400 naming the limit, on the API as on the page', async () => {
    const api = await site.app.inject({ url: '/api/packs/', query: { q: 'x'.repeat(201) }, headers: site.gate })
    assert.equal(api.statusCode, 400)
    assert.match((api.json() as { detail: string }).detail, /200/)
    const page = await site.app.inject({ url: `/?q=${'x'.repeat(100_000)}`, headers: { ...site.gate, accept: 'text/html' } })
    assert.equal(page.statusCode, 400)
  })
})

test('LIKE\'s and FTS5\'s special characters in a search are word separators, never wildcards or syntax', async () => {
  const pack = await publishPack(site, owner, { title: 'Zorblax 100%_Fresh\\Cut' })
  const id = `${pack.namespace}:${pack.pack_id}`
  for (const q of ['100%_fresh\\cut', '%_Fresh', 'zorb 100%', 'zorblax_', '"zorblax" (cut)*', "zorblax' | cut:*"]) {
    assert.deepEqual((await list({ q })).items.map((p) => p.id), [id], q)
  }
  assert.equal((await list({ q: 'zor%lax' })).total, 0, '"%" is not a wildcard')
  assert.equal((await list({ q: 'zorbl_x' })).total, 0, '"_" is not a wildcard')
  assert.equal((await list({ q: 'zorblax OR nothingatall' })).total, 0, 'OR is a word to search for, not an operator')
})
