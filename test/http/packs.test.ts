import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { expectError, makeSite, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, png, zip, type Part } from '../helpers/fixtures.js'
import { pathOf, publishPack, seedTags, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser
/** A public origin and a small version limit, for one test each (their users and packs are their own). */
let configured: TestSite

before(async () => {
  ;[{ site, alice, bob }, configured] = await Promise.all([
    siteWith({ users: ['alice', 'bob'] }),
    makeSite({ PACKS_BASE_URL: 'https://packs.example.org/', PACKS_MAX_VERSION_SIZE: '2KiB' }),
  ])
  await seedTags(site)
})
after(async () => {
  await site?.close()
  await configured?.close()
})

interface Latest {
  namespace: string
  pack_id: string
  name: string
  version: string
  pack_format: number | null
  created_at: string
  download_url: string
}

const latest = (namespace: string, packId: string, headers: Record<string, string> = site.gate) =>
  site.app.inject({ url: `/api/packs/${namespace}/${packId}/latest`, headers })

function addVersion(user: TestUser, namespace: string, packId: string, parts: Part[], target: TestSite = site) {
  const body = multipart(parts)
  return target.app.inject({
    method: 'POST',
    url: `/api/packs/${namespace}/${packId}/versions/`,
    headers: { ...user.headers, ...body.headers },
    payload: body.payload,
  })
}

const filePart = (content: Buffer, filename = 'pack.zip'): Part => ({ name: 'file', value: content, filename, contentType: 'application/zip' })

describe('GET /api/packs/{namespace}/{pack_id}/latest', () => {
  let pack: PackJson
  before(async () => {
    pack = await publishPack(site, alice, { title: 'Update Check', version_name: 'v1' })
  })

  test('needs only the gate; no credentials is 401; a bad token is 401', async () => {
    const ok = await latest('alice', 'update-check')
    assert.equal(ok.statusCode, 200, ok.body)
    assert.match(String(ok.headers['content-type']), /^application\/json/)
    expectError(await latest('alice', 'update-check', {}), 401)
    expectError(await latest('alice', 'update-check', { 'x-master-password': 'wrong' }), 401)
    expectError(await latest('alice', 'update-check', { authorization: 'Bearer alice nope' }), 401)
    assert.equal((await latest('alice', 'update-check', alice.headers)).statusCode, 200)
  })

  test('answers exactly the PackLatest fields, with an absolute download URL', async () => {
    const body = (await latest('alice', 'update-check')).json() as Latest
    // The seven base fields, and the additions for updaters (size, hashes, file name) beside them.
    assert.deepEqual(Object.keys(body).sort(), [
      'created_at', 'download_url', 'filename', 'name', 'namespace', 'pack_format', 'pack_id', 'sha1', 'sha256', 'size', 'version',
    ])
    assert.equal(body.name, 'Update Check')
    assert.equal(body.version, 'v1')
    assert.equal(body.pack_format, 48)
    assert.match(body.download_url, /^http:\/\/localhost:80\/api\/files\/[0-9a-f-]{36}\/\?download=1$/)
    assert.equal(body.download_url, pack.versions[0]!.download_url)
  })

  test('is case-insensitive and works with or without the trailing slash', async () => {
    for (const url of ['/api/packs/ALICE/Update-Check/latest', '/api/packs/alice/update-check/latest/']) {
      const res = await site.app.inject({ url, headers: site.gate })
      assert.equal(res.statusCode, 200, url)
      assert.equal((res.json() as Latest).pack_id, 'update-check')
    }
  })

  test('unknown packs are 404', async () => {
    expectError(await latest('alice', 'no-such-pack'), 404, /pack not found/)
    expectError(await latest('nobody', 'update-check'), 404)
    expectError(await latest('alice:update-check', 'x'), 404)
  })

  test('a pack asked for before it exists is found the moment it is published', async () => {
    // The first answer (404) is cached; publishing must drop it at once.
    expectError(await latest('alice', 'arrives-later'), 404)
    expectError(await latest('alice', 'arrives-later'), 404)
    await publishPack(site, alice, { title: 'Arrives Later', version_name: 'first' })
    const res = await latest('alice', 'arrives-later')
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((res.json() as { version: string }).version, 'first')
  })

  test('answers for different Host headers keep their own absolute download_url', async () => {
    const a = await site.app.inject({ url: '/api/packs/alice/update-check/latest', headers: { ...site.gate, host: 'a.example' } })
    const b = await site.app.inject({ url: '/api/packs/alice/update-check/latest', headers: { ...site.gate, host: 'b.example' } })
    assert.match((a.json() as { download_url: string }).download_url, /^http:\/\/a\.example\/api\/files\//)
    assert.match((b.json() as { download_url: string }).download_url, /^http:\/\/b\.example\/api\/files\//)
  })

  test('strong ETag, Cache-Control no-cache, If-None-Match gives 304', async () => {
    const res = await latest('alice', 'update-check')
    const etag = String(res.headers.etag)
    assert.match(etag, /^"[0-9a-f]{32}"$/)
    assert.equal(res.headers['cache-control'], 'no-cache')
    assert.equal((await latest('alice', 'update-check')).headers.etag, etag, 'stable while nothing changes')

    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const cached = await latest('alice', 'update-check', { ...site.gate, 'if-none-match': inm })
      assert.equal(cached.statusCode, 304, inm)
      assert.equal(cached.body, '')
      assert.equal(cached.headers.etag, etag)
    }
    const stale = await latest('alice', 'update-check', { ...site.gate, 'if-none-match': '"0123456789abcdef0123456789abcdef"' })
    assert.equal(stale.statusCode, 200)
  })

  test('a new version is seen at once: new body, new ETag, old ETag no longer matches', async () => {
    const before = await latest('alice', 'update-check')
    const added = await addVersion(alice, 'alice', 'update-check', [
      { name: 'version_name', value: 'v2' },
      filePart(await datapack(57)),
    ])
    assert.equal(added.statusCode, 201, added.body)
    const after = await latest('alice', 'update-check', { ...site.gate, 'if-none-match': String(before.headers.etag) })
    assert.equal(after.statusCode, 200)
    assert.notEqual(after.headers.etag, before.headers.etag)
    const body = after.json() as Latest
    assert.equal(body.version, 'v2')
    assert.equal(body.pack_format, 57)
  })

  test('download_url downloads the same bytes', async () => {
    const archive = await datapack(61, { 'data/x/function/y.mcfunction': 'say unique' })
    const added = await addVersion(alice, 'alice', 'update-check', [filePart(archive, 'release.zip'), { name: 'version_name', value: 'v3' }])
    assert.equal(added.statusCode, 201, added.body)
    const body = (await latest('alice', 'update-check')).json() as Latest
    assert.equal(body.version, 'v3')
    const download = await site.app.inject({ url: pathOf(body.download_url), headers: site.gate })
    assert.equal(download.statusCode, 200)
    assert.deepEqual(download.rawPayload, archive)
    assert.match(String(download.headers['content-disposition']), /^attachment;.*release\.zip/)
  })
})

describe('download_url with PACKS_BASE_URL', () => {
  test('uses the configured public origin', async () => {
    const other = configured
    const dave = await other.user('dave')
    await publishPack(other, dave, { title: 'Based' })
    const body = (await other.app.inject({ url: '/api/packs/dave/based/latest', headers: other.gate })).json() as Latest
    assert.match(body.download_url, /^https:\/\/packs\.example\.org\/api\/files\/[0-9a-f-]{36}\/\?download=1$/)
  })
})

describe('POST /api/packs/{namespace}/{pack_id}/versions/', () => {
  before(async () => {
    await publishPack(site, alice, { title: 'Versioned', version_name: '1.0' })
  })

  test('adds a version: 201 with the pack, versions newest first, parts in any order', async () => {
    const res = await addVersion(alice, 'alice', 'versioned', [
      filePart(await datapack(48)),
      { name: 'changelog', value: 'Fixed things\nand more' },
      { name: 'version_name', value: ' 1.1 ' },
    ])
    assert.equal(res.statusCode, 201, res.body)
    const pack = res.json() as PackJson
    assert.equal(pack.id, 'alice:versioned')
    assert.deepEqual(pack.versions.map((v) => v.name), ['1.1', '1.0'])
    assert.equal(pack.versions[0]!.changelog, 'Fixed things\nand more')
    assert.ok(pack.versions[0]!.created_at > pack.versions[1]!.created_at)
    assert.equal(pack.updated_at, pack.versions[0]!.created_at)
  })

  test('versions added back to back are ordered by publication, even within one millisecond', async () => {
    const names = ['2.0', '2.1', '2.2', '2.3', '2.4']
    for (const name of names) {
      const res = await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: name }, filePart(await datapack(48))])
      assert.equal(res.statusCode, 201, res.body)
      assert.equal(((await latest('alice', 'versioned')).json() as Latest).version, name)
    }
    const pack = (await site.app.inject({ url: '/api/packs/alice/versioned/', headers: site.gate })).json() as PackJson
    const times = pack.versions.map((v) => v.created_at)
    assert.deepEqual([...times].sort().reverse(), times)
    assert.equal(new Set(times).size, times.length, 'no two versions share a timestamp')

    // A newest version stamped ahead of this clock (another instance's skew): the next one still sorts after it.
    const ahead = new Date(Date.now() + 60_000).toISOString()
    await site.app.db.updateTable('versions').set({ created_at: ahead }).where('name', '=', '2.4').execute()
    const res = await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: '3.0' }, filePart(await datapack(48))])
    assert.equal(res.statusCode, 201)
    const body = (await latest('alice', 'versioned')).json() as Latest
    assert.equal(body.version, '3.0')
    assert.equal(body.created_at, new Date(Date.parse(ahead) + 1).toISOString())
  })

  test('a version without pack.mcmeta has pack_format null', async () => {
    const res = await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: 'no-meta' }, filePart(await zip({ 'readme.txt': 'hi' }))])
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(((await latest('alice', 'versioned')).json() as Latest).pack_format, null)
  })

  test('a duplicate version_name is 409 and leaves no stored file, whatever the part order', async () => {
    const files = await storedFiles(site)
    const packBefore = (await site.app.inject({ url: '/api/packs/alice/versioned/', headers: site.gate })).json() as PackJson
    expectError(await addVersion(alice, 'alice', 'versioned', [filePart(await datapack(48)), { name: 'version_name', value: '1.0' }]), 409, /1\.0/)
    expectError(await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: '1.0' }, filePart(await datapack(48))]), 409, /1\.0/)
    assert.deepEqual(await storedFiles(site), files)
    const packAfter = (await site.app.inject({ url: '/api/packs/alice/versioned/', headers: site.gate })).json() as PackJson
    assert.deepEqual(packAfter, packBefore)
  })

  test("someone else's pack and unknown packs are 404, nothing stored", async () => {
    const files = await storedFiles(site)
    expectError(await addVersion(bob, 'alice', 'versioned', [{ name: 'version_name', value: 'evil' }, filePart(await datapack(48))]), 404, /pack not found/)
    expectError(await addVersion(alice, 'alice', 'no-such-pack', [{ name: 'version_name', value: 'x' }, filePart(await datapack(48))]), 404)
    assert.deepEqual(await storedFiles(site), files)
    const body = (await latest('alice', 'versioned')).json() as Latest
    assert.notEqual(body.version, 'evil')
  })

  test('owner check is case-insensitive on the path', async () => {
    const res = await addVersion(alice, 'ALICE', 'Versioned', [{ name: 'version_name', value: 'caps' }, filePart(await datapack(48))])
    assert.equal(res.statusCode, 201, res.body)
  })

  test('bad input is 400 with nothing stored: not a ZIP, no version_name, no file, stray file part', async () => {
    const files = await storedFiles(site)
    expectError(await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: 'png' }, filePart(png(), 'x.zip')]), 400, /ZIP/)
    expectError(await addVersion(alice, 'alice', 'versioned', [filePart(await datapack(48))]), 400, /version_name/)
    expectError(await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: '   ' }, filePart(await datapack(48))]), 400, /version_name/)
    expectError(await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: 'nofile' }]), 400, /file/)
    expectError(await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: 'other' }, { ...filePart(await datapack(48)), name: 'archive' }]), 400, /archive/)
    const json = await site.app.inject({
      method: 'POST', url: '/api/packs/alice/versioned/versions/', headers: alice.headers, payload: { version_name: 'json' },
    })
    expectError(json, 400, /multipart/)
    assert.deepEqual(await storedFiles(site), files)
  })

  test('malformed forms are 400 with nothing stored: cut off, no boundary, two files, a field twice', async () => {
    const files = await storedFiles(site)
    const archive = await datapack(48)
    const raw = (payload: Buffer, contentType: string) => site.app.inject({
      method: 'POST', url: '/api/packs/alice/versioned/versions/', headers: { ...alice.headers, 'content-type': contentType }, payload,
    })
    const whole = multipart([{ name: 'version_name', value: 'cut' }, filePart(archive)])
    const cut = whole.payload.subarray(0, whole.payload.length - 80)
    expectError(await raw(cut, whole.headers['content-type']!), 400, /cut off/)
    expectError(await raw(whole.payload, 'multipart/form-data'), 400, /boundary/)
    expectError(await addVersion(alice, 'alice', 'versioned', [{ name: 'version_name', value: 'two' }, filePart(archive), filePart(archive)]), 400, /one file/)
    expectError(await addVersion(alice, 'alice', 'versioned', [
      { name: 'version_name', value: 'one' }, filePart(archive), { name: 'version_name', value: 'other' },
    ]), 400, /more than once/)
    assert.deepEqual(await storedFiles(site), files)
    const pack = (await site.app.inject({ url: '/api/packs/alice/versioned/', headers: site.gate })).json() as PackJson
    assert.ok(!pack.versions.some((v) => ['cut', 'two', 'one', 'other'].includes(v.name)))
  })

  test('gate-only requests are 401', async () => {
    const body = multipart([{ name: 'version_name', value: 'anon' }, filePart(await datapack(48))])
    const res = await site.app.inject({
      method: 'POST', url: '/api/packs/alice/versioned/versions/', headers: { ...site.gate, ...body.headers }, payload: body.payload,
    })
    expectError(res, 401)
  })

  test('an archive over the version limit is 413 and nothing is kept', async () => {
    const small = configured
    const erin = await small.user('erin')
    await publishPack(small, erin, { title: 'Tiny' }, { archive: await datapack(48) })
    const files = await storedFiles(small)
    const big = await zip({ 'pack.mcmeta': '{}', 'noise.bin': randomBytes(8192) })
    assert.ok(big.length > 2048)
    expectError(await addVersion(erin, 'erin', 'tiny', [{ name: 'version_name', value: 'big' }, filePart(big)], small), 413)
    assert.deepEqual(await storedFiles(small), files)
  })
})

describe('GET /api/packs/{namespace}/{pack_id}/', () => {
  test('returns the pack to gate-only callers; 404 unknown; 401 without the gate', async () => {
    const published = await publishPack(site, bob, { title: 'Shown Pack', category: 'kind', tags: ['Adventure'] }, { thumbnail: true })
    const res = await site.app.inject({ url: '/api/packs/BOB/shown-pack/', headers: site.gate })
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), published)
    const pack = res.json() as PackJson
    assert.deepEqual(pack.tags, [{ name: 'Adventure', category: 'kind', category_name: 'Kind', color: '#0055aa' }])
    assert.ok(pack.thumbnail_url)
    assert.equal((await site.app.inject({ url: pack.thumbnail_url, headers: site.gate })).statusCode, 200)
    assert.equal((await site.app.inject({ url: '/api/packs/bob/shown-pack', headers: site.gate })).statusCode, 200)
    expectError(await site.app.inject({ url: '/api/packs/bob/missing/', headers: site.gate }), 404, /pack not found/)
    expectError(await site.app.inject({ url: '/api/packs/bob/shown-pack/' }), 401)
  })
})

describe('GET /api/packs/', () => {
  let lister: TestSite
  let frank: TestUser
  let gina: TestUser
  before(async () => {
    lister = await makeSite()
    await seedTags(lister)
    frank = await lister.user('frank')
    gina = await lister.user('gina')
    await publishPack(lister, frank, { title: 'Alpha Castles', tags: ['Medieval'], category: 'theme' })
    await publishPack(lister, gina, { title: '100% Space_Stuff', tags: ['Space', 'Adventure'], category: 'theme' })
    await publishPack(lister, frank, { title: 'Beta Adventure', tags: ['adventure'], category: 'kind' })
    await publishPack(lister, gina, { title: '100 Pct SpaceXStuff' })
  })
  after(() => lister.close())

  interface ListJson {
    items: (PackJson & { latest_version: PackJson['versions'][number] })[]
    page: number
    per_page: number
    total: number
  }
  const list = async (query: Record<string, string> = {}) => {
    const res = await lister.app.inject({ url: '/api/packs/', query, headers: lister.gate })
    assert.equal(res.statusCode, 200, res.body)
    return res.json() as ListJson
  }
  const ids = (body: ListJson) => body.items.map((p) => p.id)

  test('newest updated first, with the latest version and defaults page 1 / 20', async () => {
    const body = await list()
    assert.deepEqual(ids(body), ['gina:100-pct-spacexstuff', 'frank:beta-adventure', 'gina:100-space_stuff', 'frank:alpha-castles'])
    assert.equal(body.total, 4)
    assert.equal(body.page, 1)
    assert.equal(body.per_page, 20)
    const first = body.items[0]!
    assert.equal(first.latest_version.name, '1.0.0')
    assert.equal(first.latest_version.pack_format, 48)
    assert.match(first.latest_version.download_url, /^http:\/\/localhost:80\/api\/files\//)
    assert.equal(first.owner, 'gina')
    assert.equal('versions' in first, false)

    // A new version moves its pack to the top and becomes its latest_version.
    const res = await addVersion(frank, 'frank', 'alpha-castles', [{ name: 'version_name', value: '2.0' }, filePart(await datapack(57))], lister)
    assert.equal(res.statusCode, 201, res.body)
    const after = await list()
    assert.equal(ids(after)[0], 'frank:alpha-castles')
    assert.equal(after.items[0]!.latest_version.name, '2.0')
    assert.equal(after.items[0]!.latest_version.pack_format, 57)
  })

  test('q searches words in any case, each also as the start of a word; punctuation only separates words', async () => {
    assert.deepEqual(ids(await list({ q: 'CASTLE' })), ['frank:alpha-castles'])
    assert.deepEqual(ids(await list({ q: 'stuff_ 100%' })), ['gina:100-space_stuff'], '"100%" and "stuff_" are the words 100 and stuff')
    assert.equal((await list({ q: 'spa%e' })).total, 0, '"%" is no wildcard: the words "spa" and "e", and no pack has the word "e"')
    assert.equal((await list({ q: '%' })).total, (await list()).total, 'no words: the whole listing')
    assert.equal((await list({ q: 'nothing matches' })).total, 0)
  })

  test('facets=1 and facets=true add the facet counts; another value is a 400 naming the parameter', async () => {
    for (const facets of ['1', 'true']) {
      const body = await list({ q: 'castle', facets }) as unknown as { facets: { categories: Array<{ value: string; count: number }> } }
      assert.deepEqual(body.facets.categories, [{ value: 'theme', count: 1 }], `facets=${facets}`)
    }
    assert.equal('facets' in (await list({ q: 'castle', facets: '0' })), false)
    const refused = await lister.app.inject({ url: '/api/packs/', query: { facets: 'yes' }, headers: lister.gate })
    assert.equal(refused.statusCode, 400)
    assert.match((refused.json() as { detail: string }).detail, /facets/)
  })

  test('tag (case-insensitive name) and category (key) filters, combinable', async () => {
    assert.deepEqual(ids(await list({ tag: 'ADVENTURE' })).sort(), ['frank:beta-adventure', 'gina:100-space_stuff'])
    assert.deepEqual(ids(await list({ category: 'theme' })).sort(), ['frank:alpha-castles', 'gina:100-space_stuff'])
    assert.deepEqual(ids(await list({ tag: 'adventure', category: 'kind' })), ['frank:beta-adventure'])
    assert.equal((await list({ tag: 'no-such-tag' })).total, 0)
    const tagged = (await list({ tag: 'space' })).items[0]!
    assert.deepEqual(tagged.tags.map((t) => t.name), ['Adventure', 'Space'])
    assert.deepEqual(tagged.category, { key: 'theme', name: 'Theme', color: '#aa5500' })
  })

  test('pages: per_page and page slice the list, total counts all', async () => {
    const all = ids(await list())
    const p1 = await list({ per_page: '3', page: '1' })
    const p2 = await list({ per_page: '3', page: '2' })
    assert.deepEqual([...ids(p1), ...ids(p2)], all)
    assert.equal(p2.total, 4)
    assert.equal(p2.page, 2)
    assert.equal(p2.per_page, 3)
    assert.deepEqual((await list({ page: '9' })).items, [])
  })

  test('out-of-range paging is 400; no gate is 401', async () => {
    const queries: Record<string, string>[] = [{ page: '0' }, { per_page: '0' }, { per_page: '101' }, { page: 'x' }]
    for (const query of queries) {
      expectError(await lister.app.inject({ url: '/api/packs/', query, headers: lister.gate }), 400)
    }
    expectError(await lister.app.inject({ url: '/api/packs/' }), 401)
  })
})

describe('OpenAPI', () => {
  test('documents the pack and draft operations', async () => {
    const doc = (await site.app.inject({ url: '/api/schema/', headers: site.gate })).json() as {
      paths: Record<string, Record<string, { security?: unknown; requestBody?: { content: Record<string, unknown> }; responses: Record<string, unknown> }>>
    }
    const latestOp = doc.paths['/api/packs/{namespace}/{pack_id}/latest']?.get
    assert.ok(latestOp, 'latest is documented without a trailing slash')
    assert.equal(latestOp.security, undefined)
    assert.ok(latestOp.responses['200'] && latestOp.responses['401'] && latestOp.responses['404'])
    const versionsOp = doc.paths['/api/packs/{namespace}/{pack_id}/versions/']?.post
    assert.ok(versionsOp?.requestBody?.content['multipart/form-data'])
    assert.deepEqual(versionsOp.security, [{ bearerAuth: [] }])
    for (const method of ['get', 'post', 'delete']) {
      const op = doc.paths['/api/draft/']?.[method]
      assert.deepEqual(op?.security, [{ bearerAuth: [] }], method)
      assert.ok(op.responses['404'], method)
    }
    assert.ok(doc.paths['/api/draft/publish/']?.post?.responses['201'])
  })
})
