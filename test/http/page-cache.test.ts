// Browse pages kept whole (src/web/page-cache.ts, src/pages/browse.ts), on a listening site with its in-memory
// copy of the index loaded, as a server runs: a page asked again is served from what was kept; a change
// another instance makes (written here straight to the database, which is all this process sees of another
// instance: the search log's rows) shows within a second, as does one made through this instance's API and a
// category renamed in the database (as the admin CLI does, from another process); and the header around a
// kept page is each viewer's own.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { keptBrowsePages } from '../../src/pages/browse.js'
import { searchSnapshotOf } from '../../src/packs/search-memory.js'
import { siteWith, signIn, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack, seedTags, type PackJson } from '../helpers/packs.js'
import { until } from '../helpers/wait.js'

let site: TestSite
let alice: TestUser
let pack: PackJson
const HTML = { accept: 'text/html' }
/** Nothing is kept for two seconds after a change of this process: it may still have been committing when read. */
const SETTLE = () => new Promise((resolve) => setTimeout(resolve, 2_100))

before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'] }))
  await seedTags(site)
  pack = await publishPack(site, alice, { title: 'Kept Lanterns', category: 'theme', tags: ['Medieval'] })
  await publishPack(site, alice, { title: 'Other Lamps' })
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  await searchSnapshotOf(site.app.db).loaded(site.app.db)
  await SETTLE()
})
after(() => site.close())

const browse = async (url = '/', cookie?: string) => {
  const res = await site.app.inject({ url, headers: { ...HTML, ...site.gate, ...(cookie ? { cookie } : {}) } })
  assert.equal(res.statusCode, 200, res.body)
  return res.body
}
const hits = () => keptBrowsePages(site.app.db)!.hits

/** Waits (at most 1 s) until the front page shows what `expect` looks for. */
async function within1s(expect: (body: string) => boolean, what: string): Promise<void> {
  await until(async () => (expect(await browse()) ? true : undefined), what, 1000, 20)
}

test('a page asked again is served from what was kept', async () => {
  const first = await browse('/?q=lanterns')
  const before = hits()
  assert.equal(await browse('/?q=lanterns'), first)
  assert.equal(hits(), before + 1, 'the second answer was the kept one')
})

test('another instance\'s change (the search log\'s rows) shows within a second', async () => {
  await browse()
  await browse()
  await site.app.db.updateTable('packs').set({ title: 'Kept Lanterns Renamed' }).where('namespace', '=', pack.namespace).where('pack_id', '=', pack.pack_id).execute()
  await within1s((body) => body.includes('Kept Lanterns Renamed'), 'the new title')
  await site.app.db.updateTable('packs').set({ hidden_at: new Date().toISOString() }).where('namespace', '=', pack.namespace).where('pack_id', '=', pack.pack_id).execute()
  await within1s((body) => !body.includes('Kept Lanterns'), 'the hidden pack gone')
  await site.app.db.updateTable('packs').set({ hidden_at: null }).where('namespace', '=', pack.namespace).where('pack_id', '=', pack.pack_id).execute()
  await within1s((body) => body.includes('Kept Lanterns'), 'the pack back')
})

test('a category renamed in the database shows within a second', async () => {
  await browse()
  await browse()
  await site.app.db.updateTable('categories').set({ name: 'Themes Renamed' }).where('key', '=', 'theme').execute()
  await within1s((body) => body.includes('Themes Renamed'), 'the new category name')
})

test('an edit through this instance\'s API shows at once', async () => {
  await browse()
  const current = (await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: alice.headers })).json() as { revision: number }
  const edited = await site.app.inject({
    method: 'PATCH', url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: alice.headers, payload: { revision: current.revision, summary: 'Lanterns, kept and edited' },
  })
  assert.equal(edited.statusCode, 200, edited.body)
  assert.match(await browse(), /Lanterns, kept and edited/)
})

test('the header around a kept page is each viewer\'s own', async () => {
  await SETTLE()
  const anonymous = await browse()
  const session = await signIn(site, alice)
  const before = hits()
  const signedIn = await browse('/', session.cookie)
  assert.doesNotMatch(anonymous, /Signed in as/)
  assert.match(signedIn, /Signed in as <strong>alice<\/strong>/)
  assert.ok(signedIn.includes(session.csrf), 'the viewer\'s own CSRF token')
  // Signed in, the body differs only in the empty state's words: kept apart from the anonymous one.
  assert.equal(hits(), before)
  await browse('/', session.cookie)
  assert.equal(hits(), before + 1)
})
