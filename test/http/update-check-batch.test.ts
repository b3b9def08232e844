// Batch and by-hash: POST /api/update-check/ checks
// up to 200 packs in one request, each with exactly the single check's answer
// or null, the misses read in one database round trip, with an ETag over the
// whole answer; GET /api/update-check/by-hash/{hash} and its batch name the
// pack and version of an archive by its SHA-1 or SHA-256 (any case) and the
// newest version for the player's game.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { until } from '../helpers/wait.js'
import { createHash } from 'node:crypto'
import { buildApp } from '../../src/app.js'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { multipart, zip } from '../helpers/fixtures.js'
import { publishPack } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser
let warden: TestUser
const archives = new Map<string, Buffer>()

const resourcePack = (pack: Record<string, unknown>, salt: string) =>
  zip({ 'pack.mcmeta': JSON.stringify({ pack: { description: salt, ...pack } }), [`assets/x/${salt}.txt`]: salt })
const sha1 = (data: Buffer) => createHash('sha1').update(data).digest('hex')
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')

async function addVersion(user: TestUser, packPath: string, name: string, archive: Buffer): Promise<void> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: archive, filename: `${name}.zip`, contentType: 'application/zip' }])
  const res = await site.app.inject({ method: 'POST', url: `/api/packs/${packPath}/versions/`, headers: { ...user.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
  archives.set(`${packPath}@${name}`, archive)
}

const batch = (payload: unknown, headers: Record<string, string> = {}) =>
  site.app.inject({ method: 'POST', url: '/api/update-check/', headers: { ...site.gate, ...headers }, payload: payload as object })
const byHash = (hash: string, query = '') => site.app.inject({ url: `/api/update-check/by-hash/${hash}${query}`, headers: site.gate })
const hashBatch = (payload: unknown, headers: Record<string, string> = {}) =>
  site.app.inject({ method: 'POST', url: '/api/update-check/by-hash/', headers: { ...site.gate, ...headers }, payload: payload as object })
const single = (id: string, query = '') => {
  const [namespace, packId] = id.split(':')
  return site.app.inject({ url: `/api/packs/${namespace}/${packId}/latest${query}`, headers: site.gate })
}

/** Counts the queries the app's database runs while `work` does (the update-check opens no transaction). */
async function queriesDuring(work: () => Promise<unknown>): Promise<number> {
  const executor = site.app.db.getExecutor() as { executeQuery: (...args: unknown[]) => Promise<unknown> }
  const original = executor.executeQuery
  let count = 0
  executor.executeQuery = function (this: unknown, ...args: unknown[]) {
    count += 1
    return original.apply(this, args)
  }
  try {
    await work()
  } finally {
    executor.executeQuery = original
  }
  return count
}

before(async () => {
  ;({ site, alice, bob, warden } = await siteWith({ users: ['alice', 'bob'], staff: ['warden'] }))
  // alice:lamps: 1.20.1 only (resource 15), then 1.21 – 1.21.4 (34 – 46), then 1.21.9+ ([69] – [75]).
  const first = await resourcePack({ pack_format: 15 }, 'lamps-1')
  await publishPack(site, alice, { title: 'Lamps', version_name: 'for-1.20' }, { archive: first })
  archives.set('alice/lamps@for-1.20', first)
  await addVersion(alice, 'alice/lamps', 'for-1.21', await resourcePack({ pack_format: 34, supported_formats: [34, 46] }, 'lamps-2'))
  await addVersion(alice, 'alice/lamps', 'for-1.21.9', await resourcePack({ min_format: 69, max_format: [75, 0] }, 'lamps-3'))
  const caves = await resourcePack({ pack_format: 46 }, 'caves-1')
  await publishPack(site, bob, { title: 'Caves' , version_name: '1.0' }, { archive: caves })
  archives.set('bob/caves@1.0', caves)
  // Hidden by staff: the single check says 404, so the batch says null.
  await publishPack(site, bob, { title: 'Secret', version_name: '1.0' }, { archive: await resourcePack({ pack_format: 46 }, 'secret-1') })
  const hide = await site.app.inject({ method: 'POST', url: '/api/packs/bob/secret/hide/', headers: warden.headers, payload: {} })
  assert.equal(hide.statusCode, 200, hide.body)
})
after(() => site.close())

describe('the batch update-check', () => {
  test('each id once, spelt as sent, in order: the single check\'s exact bytes, or null where it says 404', async () => {
    const ids = ['bob:caves', 'Alice:LAMPS', 'alice:lamps', 'nobody:none', 'bob:secret', 'bob:caves']
    const res = await batch({ packs: ids })
    assert.equal(res.statusCode, 200, res.body)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    const body = res.json() as { packs: Record<string, unknown> }
    assert.deepEqual(Object.keys(body.packs), ['bob:caves', 'Alice:LAMPS', 'alice:lamps', 'nobody:none', 'bob:secret'])
    for (const id of Object.keys(body.packs)) {
      const one = await single(id)
      if (one.statusCode === 404) assert.equal(body.packs[id], null, id)
      else {
        assert.equal(one.statusCode, 200)
        assert.ok(res.body.includes(`${JSON.stringify(id)}:${one.body}`), `${id}: the batch holds the single answer's bytes`)
      }
    }
    assert.equal((body.packs['alice:lamps'] as { version: string }).version, 'for-1.21.9')
    assert.equal(body.packs['nobody:none'], null)
    assert.equal(body.packs['bob:secret'], null, 'a hidden pack is not offered')
  })

  test('with game_version or pack_format: each pack\'s single answer for that game, null where none fits', async () => {
    for (const query of [{ game_version: '1.21.4' }, { game_version: '1.20.1' }, { pack_format: 46 }, { pack_format: 75 }]) {
      const qs = `?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`
      const res = await batch({ packs: ['alice:lamps', 'bob:caves'], ...query })
      assert.equal(res.statusCode, 200, res.body)
      const body = res.json() as { packs: Record<string, unknown> }
      for (const id of ['alice:lamps', 'bob:caves']) {
        const one = await single(id, qs)
        assert.deepEqual(body.packs[id], one.statusCode === 200 ? one.json() : null, `${id}${qs}`)
      }
    }
    const old = (await batch({ packs: ['alice:lamps', 'bob:caves'], game_version: '1.20.1' })).json() as { packs: Record<string, { version: string } | null> }
    assert.equal(old.packs['alice:lamps']?.version, 'for-1.20')
    assert.equal(old.packs['bob:caves'], null, 'caves has nothing for 1.20.1')
  })

  test('the misses are read in one database round trip, and the next batch in none', async () => {
    // With Redis, an instance whose invalidation feed missed a PING for a few seconds (a loaded machine)
    // rightly asks Redis and drops answers it cannot vouch for; that is tested in the Redis cache's own
    // tests. Here a measurement counts only when the feed stayed live through it, and one the feed
    // interrupted is taken again with a variant never asked before.
    const cache = site.app.updateCheckCache as { revalidateMany?: (keys: readonly string[]) => Promise<void> | undefined }
    const original = cache.revalidateMany
    let askedRedis = false
    if (original) cache.revalidateMany = (keys) => { const asking = original(keys); if (asking !== undefined) askedRedis = true; return asking }
    try {
      const ids = ['alice:lamps', 'bob:caves', 'bob:secret', ...Array.from({ length: 150 }, (_, i) => `ghost${i}:pack${i}`)]
      for (let attempt = 0; ; attempt++) {
        askedRedis = false
        // A fresh variant (this pack_format was never asked) misses for every pack.
        const packFormat = 40 + attempt
        const first = await queriesDuring(() => batch({ packs: ids, pack_format: packFormat }))
        const second = await queriesDuring(() => batch({ packs: ids, pack_format: packFormat }))
        if (askedRedis && attempt < 4) continue
        assert.equal(askedRedis, false, 'the feed stayed live for one measurement in five')
        assert.equal(first, 1, 'one query for 153 misses')
        assert.equal(second, 0, 'all cached')
        break
      }
    } finally {
      if (original) cache.revalidateMany = original
    }
  })

  test('an ETag over the whole answer: 304 while nothing in it changed, 200 when one pack changes', async () => {
    const payload = { packs: ['alice:lamps', 'bob:caves'] }
    const first = await batch(payload)
    const etag = String(first.headers.etag)
    assert.match(etag, /^"[0-9a-f]{32}"$/)
    assert.equal(first.headers['cache-control'], 'no-cache')
    const again = await batch(payload, { 'if-none-match': etag })
    assert.equal(again.statusCode, 304)
    assert.equal(again.body, '')
    assert.equal(again.headers['content-length'], undefined)
    assert.equal(again.headers['packs-signature'], undefined, 'nothing to sign')
    // Another set of packs is another answer.
    assert.equal((await batch({ packs: ['bob:caves'] }, { 'if-none-match': etag })).statusCode, 200)
    await addVersion(bob, 'bob/caves', '1.1', await resourcePack({ pack_format: 46 }, 'caves-2'))
    const changed = await batch(payload, { 'if-none-match': etag })
    assert.equal(changed.statusCode, 200)
    assert.notEqual(changed.headers.etag, etag)
    assert.equal((changed.json() as { packs: Record<string, { version: string }> }).packs['bob:caves']?.version, '1.1')
  })

  test('refusals: too many, none, malformed ids, both parameters, an unknown release, other fields', async () => {
    expectError(await batch({ packs: Array.from({ length: 201 }, (_, i) => `a:p${i}`) }), 400)
    expectError(await batch({ packs: [] }), 400)
    expectError(await batch({}), 400)
    expectError(await batch({ packs: { 'alice:lamps': true } }), 400)
    expectError(await batch({ packs: ['no-colon'] }), 400)
    expectError(await batch({ packs: ['a:b:c'] }), 400)
    expectError(await batch({ packs: [`a:${'x'.repeat(65)}`] }), 400)
    expectError(await batch({ packs: ['alice:lamps'], pack_format: 46, game_version: '1.21.4' }), 400, /not both/)
    expectError(await batch({ packs: ['alice:lamps'], game_version: '1.99.9' }), 404, /unknown Minecraft release/)
    expectError(await batch({ packs: ['alice:lamps'], game_versions: '1.21.4' }), 400)
    expectError(await site.app.inject({ method: 'POST', url: '/api/update-check/', payload: { packs: ['alice:lamps'] } }), 401)
    // 200 ids is the limit, not past it.
    assert.equal((await batch({ packs: Array.from({ length: 200 }, (_, i) => `a:p${i}`) })).statusCode, 200)
  })

  test('a signed-in browser may ask without a CSRF token: the batch changes nothing', async () => {
    const login = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: 'alice', password: alice.password } })
    const cookie = String(login.headers['set-cookie']).split(';')[0]!
    const res = await site.app.inject({ method: 'POST', url: '/api/update-check/', headers: { cookie }, payload: { packs: ['alice:lamps'] } })
    assert.equal(res.statusCode, 200, res.body)
  })
})

describe('by hash', () => {
  test('SHA-1 or SHA-256, any case: the pack, the version, and the newest version', async () => {
    const archive = archives.get('alice/lamps@for-1.21')!
    for (const hash of [sha1(archive), sha256(archive), sha1(archive).toUpperCase(), sha256(archive).toUpperCase()]) {
      const res = await byHash(hash)
      assert.equal(res.statusCode, 200, res.body)
      const body = res.json() as { hash: string; algorithm: string; namespace: string; pack_id: string; version: Record<string, unknown>; latest: { version: string } }
      assert.equal(body.hash, hash.toLowerCase())
      assert.equal(body.algorithm, hash.length === 40 ? 'sha1' : 'sha256')
      assert.equal(body.namespace, 'alice')
      assert.equal(body.pack_id, 'lamps')
      assert.equal(body.version.name, 'for-1.21')
      assert.equal(body.version.sha256, sha256(archive))
      assert.equal(body.version.sha1, sha1(archive))
      assert.equal(body.version.size, archive.length)
      assert.equal(body.version.yanked, false)
      assert.equal(body.latest.version, 'for-1.21.9')
      // latest is the update-check's own bytes.
      assert.ok(res.body.endsWith(`"latest":${(await single('alice:lamps')).body}}`))
      assert.ok(res.headers['packs-signature'])
    }
  })

  test('latest follows game_version / pack_format, null where the update-check says 404', async () => {
    const hash = sha256(archives.get('alice/lamps@for-1.20')!)
    assert.equal(((await byHash(hash, '?game_version=1.21.4')).json() as { latest: { version: string } }).latest.version, 'for-1.21')
    assert.equal(((await byHash(hash, '?pack_format=15')).json() as { latest: { version: string } }).latest.version, 'for-1.20')
    const none = await byHash(hash, '?game_version=1.21.5')
    assert.equal(none.statusCode, 200)
    assert.equal((none.json() as { latest: unknown }).latest, null)
    expectError(await byHash(hash, '?game_version=1.99.9'), 404, /unknown Minecraft release/)
    expectError(await byHash(hash, '?game_version=1.21.4&pack_format=46'), 400)
  })

  test('a yanked version is still named; a hidden pack\'s and an unknown archive are 404; malformed hashes 400', async () => {
    const archive = archives.get('alice/lamps@for-1.21.9')!
    const versions = (await site.app.inject({ url: '/api/packs/alice/lamps/', headers: site.gate })).json() as { versions: { id: string; name: string }[] }
    const id = versions.versions.find((v) => v.name === 'for-1.21.9')!.id
    const yank = await site.app.inject({ method: 'PATCH', url: `/api/packs/alice/lamps/versions/${id}/`, headers: alice.headers, payload: { yanked: true } })
    assert.equal(yank.statusCode, 200, yank.body)
    try {
      const res = await byHash(sha256(archive))
      assert.equal(res.statusCode, 200)
      const body = res.json() as { version: { yanked: boolean; name: string }; latest: { version: string } }
      assert.equal(body.version.yanked, true)
      assert.equal(body.latest.version, 'for-1.21', 'the newest that is not yanked')
    } finally {
      await site.app.inject({ method: 'PATCH', url: `/api/packs/alice/lamps/versions/${id}/`, headers: alice.headers, payload: { yanked: false } })
    }
    const secret = await resourcePack({ pack_format: 46 }, 'secret-1')
    expectError(await byHash(sha256(secret)), 404, /no public version/)
    expectError(await byHash('0'.repeat(64)), 404)
    expectError(await byHash('0'.repeat(39)), 400)
    expectError(await byHash('0'.repeat(41)), 400)
    expectError(await byHash('g'.repeat(40)), 400)
    // Past the router's longest path parameter: not a route at all.
    expectError(await byHash('0'.repeat(100_000)), 404)
  })

  test('the same archive in two of one owner\'s packs names the one published first', async () => {
    const copy = archives.get('bob/caves@1.0')!
    await publishPack(site, bob, { title: 'Caves Again', version_name: '1.0' }, { archive: copy })
    const body = (await byHash(sha1(copy))).json() as { namespace: string; pack_id: string }
    assert.deepEqual([body.namespace, body.pack_id], ['bob', 'caves'])
  })

  test('the batch: each hash once, as sent, in order; one signed body with an ETag and 304', async () => {
    const lamps = archives.get('alice/lamps@for-1.20')!
    const caves = archives.get('bob/caves@1.0')!
    const hashes = [sha256(lamps).toUpperCase(), sha1(caves), '1'.repeat(40), sha256(lamps).toUpperCase()]
    const res = await hashBatch({ hashes, game_version: '1.21.4' })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json() as { hashes: Record<string, { pack_id: string; latest: { version: string } | null } | null> }
    assert.deepEqual(Object.keys(body.hashes), [sha256(lamps).toUpperCase(), sha1(caves), '1'.repeat(40)])
    assert.equal(body.hashes[sha256(lamps).toUpperCase()]?.latest?.version, 'for-1.21')
    assert.equal(body.hashes[sha1(caves)]?.pack_id, 'caves')
    assert.equal(body.hashes['1'.repeat(40)], null)
    // Each entry is what the single lookup answers.
    for (const hash of [sha256(lamps).toUpperCase(), sha1(caves)]) {
      assert.deepEqual(body.hashes[hash], (await byHash(hash, '?game_version=1.21.4')).json())
    }
    const again = await hashBatch({ hashes, game_version: '1.21.4' }, { 'if-none-match': String(res.headers.etag) })
    assert.equal(again.statusCode, 304)
    expectError(await hashBatch({ hashes: [] }), 400)
    expectError(await hashBatch({ hashes: Array.from({ length: 201 }, () => '0'.repeat(40)) }), 400)
    expectError(await hashBatch({ hashes: ['xyz'] }), 400)
  })
})

describe('on every instance', () => {
  test('a new version through one instance changes the other\'s batch and by-hash answers as soon as the change reaches it', async (t) => {
    if (site.config.redisUrl === null) return t.skip('needs REDIS_URL (the scaled combination): one instance alone has nothing to share')
    const other = await buildApp(site.config, { logger: false, sweep: false })
    try {
      await other.ready()
      const ask = () => other.inject({ method: 'POST', url: '/api/update-check/', headers: site.gate, payload: { packs: ['bob:caves', 'alice:lamps'] } })
      const first = (await ask()).json() as { packs: Record<string, { version: string }> }
      const before = first.packs['bob:caves']!.version
      const hash = sha256(archives.get('bob/caves@1.0')!)
      assert.equal(((await other.inject({ url: `/api/update-check/by-hash/${hash}`, headers: site.gate })).json() as { latest: { version: string } }).latest.version, before)
      // Published through the first instance; the other has both packs cached.
      await addVersion(bob, 'bob/caves', 'other-instance', await resourcePack({ pack_format: 46 }, 'caves-other'))
      // The change reaches the other instance by Redis pub/sub, within milliseconds (update-check-feed.test.ts).
      const after_ = await until(async () => {
        const answer = (await ask()).json() as { packs: Record<string, { version: string }> }
        return answer.packs['bob:caves']!.version === 'other-instance' ? answer : undefined
      }, 'the other instance has the new version', 3000)
      assert.equal(after_.packs['alice:lamps']!.version, first.packs['alice:lamps']!.version)
      assert.equal(((await other.inject({ url: `/api/update-check/by-hash/${hash}`, headers: site.gate })).json() as { latest: { version: string } }).latest.version, 'other-instance')
      // Both instances sign with the site's one key.
      const mine = await site.app.inject({ url: '/api/update-check/keys/', headers: site.gate })
      const theirs = await other.inject({ url: '/api/update-check/keys/', headers: site.gate })
      assert.equal(mine.body, theirs.body)
    } finally {
      await other.close()
    }
  })
})
