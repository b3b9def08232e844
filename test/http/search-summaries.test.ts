// The packs a search lists are kept for a second while the in-memory copy answers (search-service.ts,
// summariesOf): a change search's log records shows in the next search, whoever wrote it (here written
// straight to the database, as another instance would, without this process knowing); a change the log
// does not record (a category's colour) shows within the second; a change made through this process shows
// at once.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { searchSnapshotOf } from '../../src/packs/search-memory.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack, seedTags, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let owl: PackJson

interface Listed { items: Array<{ id: string; title: string; downloads: number; tags: Array<{ name: string; color: string }> }> }

before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'] }))
  await seedTags(site)
  owl = await publishPack(site, alice, { title: 'Owl Calls', summary: 'Owls hoot at night.', tags: ['Medieval'] })
  await publishPack(site, alice, { title: 'Owl Feathers', summary: 'Feathers for arrows.' })
  await searchSnapshotOf(site.app.db).loaded(site.app.db)
  // Nothing is kept for two seconds after a change of this process (the packs just published): it may still
  // have been committing when they were read.
  await new Promise((resolve) => setTimeout(resolve, 2_100))
})
after(() => site.close())

async function search(): Promise<Listed['items'][number]> {
  const res = await site.app.inject({ method: 'GET', url: '/api/packs/?q=owl+calls', headers: site.gate })
  assert.equal(res.statusCode, 200, res.body)
  const hit = (res.json() as Listed).items.find((item) => item.id === owl.id)
  assert.ok(hit, 'the pack is found')
  return hit
}

test('a change the search log records shows in the next search, though no request of this process made it', async () => {
  assert.equal((await search()).downloads, 0)
  await site.app.db.updateTable('packs').set({ downloads: 42 }).where('namespace', '=', owl.namespace).where('pack_id', '=', owl.pack_id).execute()
  assert.equal((await search()).downloads, 42)
  await site.app.db.updateTable('packs').set({ title: 'Owl Calls Renamed' }).where('namespace', '=', owl.namespace).where('pack_id', '=', owl.pack_id).execute()
  assert.equal((await search()).title, 'Owl Calls Renamed')
})

test('a change the log does not record shows within a second, and the listed packs are not read again before', async () => {
  assert.equal((await search()).tags[0]!.color, '#aa5500')
  const changedAt = Date.now()
  await site.app.db.updateTable('categories').set({ color: '#123456' }).where('key', '=', 'theme').execute()
  const soon = await search()
  // Kept for a second: a search this soon lists what it read before (unless the machine stalled that long).
  if (Date.now() - changedAt < 800) assert.equal(soon.tags[0]!.color, '#aa5500', 'the listed packs are kept, not read again')
  await new Promise((resolve) => setTimeout(resolve, 1_100))
  assert.equal((await search()).tags[0]!.color, '#123456')
})

test('an edit through the API shows in the next search', async () => {
  const pack = (await site.app.inject({ method: 'GET', url: `/api/packs/${owl.namespace}/${owl.pack_id}/`, headers: alice.headers })).json() as PackJson & { revision: number }
  await search()
  const res = await site.app.inject({
    method: 'PATCH', url: `/api/packs/${owl.namespace}/${owl.pack_id}/`, headers: alice.headers, payload: { revision: pack.revision, title: 'Owl Calls Again' },
  })
  assert.equal(res.statusCode, 200, res.body)
  assert.equal((await search()).title, 'Owl Calls Again')
})
