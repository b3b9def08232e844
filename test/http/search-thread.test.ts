// A listening server answers searches on a thread of its own (src/packs/search-thread.ts): the thread keeps
// its own copy of the index, on its own handle of the same database, and must answer exactly what the main
// thread would have (searchPacksHere, asked directly on the main thread here), for the relevance corpus's
// queries with filters, sorts, pages and facet counts, as an anonymous visitor and as staff. A change made
// through the API is found by the next search over a real socket; a thread that cannot open the database
// leaves searches to the main thread instead of failing them; closing the app ends the thread.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { searchSnapshotOf } from '../../src/packs/search-memory.js'
import { releasesMatching, searchPacks, searchPacksHere, type PackSearch } from '../../src/packs/search-service.js'
import { attachSearchThread, detachSearchThread, searchThreadOf } from '../../src/packs/search-thread.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import type { PackJson } from '../helpers/packs.js'
import { QUERIES, corpusId, seedCorpus, type SeededCorpus } from '../helpers/search-corpus.js'

let site: TestSite
let root: TestUser
let corpus: SeededCorpus
let base = ''

function corpusPack(owner: string, title: string): PackJson {
  const pack = corpus.packs.get(corpusId({ owner, title }))
  assert.ok(pack, `the corpus has ${owner}'s ${title}`)
  return pack
}

/** The ids a search over the real socket lists (as an anonymous visitor past the gate). */
async function listed(query: string): Promise<string[]> {
  const res = await fetch(`${base}/api/packs/?${query}`, { headers: site.gate })
  const body = await res.json() as { items?: Array<{ id: string }>; detail?: string }
  assert.equal(res.status, 200, body.detail)
  return body.items!.map((item) => item.id)
}

before(async () => {
  ;({ site, root } = await siteWith({ staff: ['root'] }))
  corpus = await seedCorpus(site)
  const hidden = corpusPack('pixelsmith', 'Faithful 64x')
  const res = await site.app.inject({ method: 'POST', url: `/api/packs/${hidden.namespace}/${hidden.pack_id}/hide/`, headers: root.headers, payload: { reason: 'tests' } })
  assert.equal(res.statusCode, 200, res.body)
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  base = `http://127.0.0.1:${(site.app.server.address() as AddressInfo).port}`
})

after(async () => {
  await site?.close()
})

describe('the search thread', () => {
  test('answers every search exactly as the main thread does, from its own copy of the index', async () => {
    const thread = searchThreadOf(site.app.db)
    assert.ok(thread, 'a listening app has a search thread')
    const { packs } = await thread.loaded()
    assert.ok(packs >= corpus.packs.size, `the thread's copy holds every pack (${packs})`)
    const searches: PackSearch[] = []
    for (const { query } of QUERIES) {
      searches.push({ q: query, facets: true })
      searches.push({ q: query, sort: 'downloads', kinds: ['resource'] })
    }
    searches.push(
      { facets: true },
      { sort: 'title', kinds: ['data'], facets: true },
      { releases: [releasesMatching('>=1.20')], sort: 'created' },
      { categories: ['decoration', 'worldgen'], facets: true },
      { q: 'faithful', includeHidden: true, facets: true },
      { q: 'faithful' },
      { q: 'dargon', sort: 'relevance' },
      { q: 'zzzqqqxxxnothing' },
    )
    const now = Date.now()
    const fromThread = []
    for (const search of searches) fromThread.push(await searchPacks(site.app.db, search, { limit: 20, offset: 0 }, now))
    // The main thread has not searched yet: its own copy was never loaded, so the thread answered all of them.
    assert.equal(searchSnapshotOf(site.app.db).size, 0)
    let hits = 0
    for (const [i, search] of searches.entries()) {
      const here = await searchPacksHere(site.app.db, search, { limit: 20, offset: 0 }, now)
      assert.deepStrictEqual(fromThread[i], here, `the same answer for ${JSON.stringify(search)}`)
      hits += here.items.length
    }
    assert.ok(hits > searches.length, `the searches find packs (${hits} hits)`)
    const faithful = corpusPack('pixelsmith', 'Faithful 64x')
    const anonymous = fromThread[searches.findIndex((s) => s.q === 'faithful' && !s.includeHidden)]!
    const staff = fromThread[searches.findIndex((s) => s.q === 'faithful' && s.includeHidden)]!
    const isFaithful = (item: { namespace: string; packId: string }) => item.namespace === faithful.namespace && item.packId === faithful.pack_id
    assert.ok(!anonymous.items.some(isFaithful), 'a hidden pack is not among the hits')
    assert.ok(staff.items.some(isFaithful), 'staff asking for hidden packs find it')
  })

  test('a change made through the API is found by the next search over a real socket', async () => {
    const pack = corpusPack('pixelsmith', 'Faithful 32x')
    const url = `/api/packs/${pack.namespace}/${pack.pack_id}/`
    const current = JSON.parse((await site.app.inject({ url, headers: root.headers })).body) as { revision: number }
    assert.deepEqual(await listed('q=quokkaesque'), [])
    const res = await site.app.inject({ method: 'PATCH', url, headers: root.headers, payload: { revision: current.revision, title: 'Faithful 32x Quokkaesque' } })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(await listed('q=quokkaesque'), [pack.id])
    assert.deepEqual(await listed('q=quokkaesqe'), [pack.id], 'a typo finds it too')
  })

  test('a thread that cannot open the database leaves searches to the main thread', async () => {
    const expected = await listed('q=dragon&sort=title')
    assert.ok(expected.length > 0)
    await detachSearchThread(site.app.db)
    const died: Error[] = []
    // A database under a file, not a directory: opening it fails whoever runs the test.
    const file = path.join(site.dataDir, 'not-a-directory')
    fs.writeFileSync(file, '')
    attachSearchThread(site.app.db, { databaseUrl: `sqlite:${path.join(file, 'packs.db')}`, onDied: (error) => died.push(error) }).start()
    assert.deepEqual(await listed('q=dragon&sort=title'), expected)
    for (let waited = 0; died.length === 0 && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
    assert.equal(died.length, 1, 'the thread died once (and is not started again at once)')
    assert.deepEqual(await listed('q=dragon&sort=title'), expected)
    assert.deepEqual(await listed('q=dragon&sort=title&facets=true'), expected)
    assert.equal(died.length, 1)
  })

  test('closing the app ends its search thread', async () => {
    await detachSearchThread(site.app.db)
    attachSearchThread(site.app.db, { databaseUrl: site.config.databaseUrl }).start()
    const thread = searchThreadOf(site.app.db)!
    await thread.loaded()
    await site.app.close()
    assert.equal(searchThreadOf(site.app.db), undefined)
    await assert.rejects(thread.search([{ q: 'dragon' }, { limit: 20, offset: 0 }, Date.now()]), /no search thread/)
  })
})
