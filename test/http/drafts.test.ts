import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { expectError, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, png } from '../helpers/fixtures.js'
import { saveDraft, upload } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser

before(async () => ({ site, alice, bob } = await siteWith({ users: ['alice', 'bob'] })))
after(() => site.close())

const get = (user: TestUser | null, draft?: string) =>
  site.app.inject({ method: 'GET', url: '/api/draft/', query: draft === undefined ? {} : { draft }, headers: user?.headers ?? site.gate })
const post = (user: TestUser, payload: unknown) =>
  site.app.inject({ method: 'POST', url: '/api/draft/', headers: user.headers, payload: payload as Record<string, unknown> })
const del = (user: TestUser, draft: string) =>
  site.app.inject({ method: 'DELETE', url: '/api/draft/', query: { draft }, headers: user.headers })

describe('authentication', () => {
  test('every draft operation needs a user: gate-only and anonymous requests get 401', async () => {
    const draft = randomUUID()
    for (const headers of [site.gate, {}]) {
      expectError(await site.app.inject({ method: 'GET', url: `/api/draft/?draft=${draft}`, headers }), 401)
      expectError(await site.app.inject({ method: 'POST', url: '/api/draft/', headers, payload: { draft, data: {} } }), 401)
      expectError(await site.app.inject({ method: 'DELETE', url: `/api/draft/?draft=${draft}`, headers }), 401)
      expectError(await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers, payload: { draft } }), 401)
    }
  })
})

describe('POST /api/draft/ then GET', () => {
  test('data comes back exactly as saved, unknown members, nesting and unicode included', async () => {
    const draft = randomUUID()
    const data = {
      title: 'Château 🏰 pack',
      summary: '',
      category: null,
      description: 'Line one\nLine "two" \\ <b>html</b>\u2028',
      tags: ['Medieval', 'Space'],
      version_name: '1.0.0',
      changelog: '- first',
      editor: { cursor: { line: 3, column: 14 }, panes: [1, 2.5, -3, true, false, null, 'x'], empty: {}, none: [] },
      big: 9007199254740991,
      日本語: 'キー',
    }
    const res = await post(alice, { draft, data })
    assert.equal(res.statusCode, 200, res.body)
    const saved = res.json() as { saved: boolean; updated_at: string }
    assert.equal(saved.saved, true)
    assert.match(saved.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

    const loaded = await get(alice, draft)
    assert.equal(loaded.statusCode, 200, loaded.body)
    assert.deepEqual(loaded.json(), { data, uploads: [] })
  })

  test('a second save replaces the data and moves updated_at forward', async () => {
    const draft = randomUUID()
    const first = (await post(alice, { draft, data: { title: 'One', extra: 1 } })).json() as { updated_at: string }
    await new Promise((resolve) => setTimeout(resolve, 5))
    const second = await post(alice, { draft, data: { title: 'Two' } })
    assert.equal(second.statusCode, 200)
    assert.ok((second.json() as { updated_at: string }).updated_at > first.updated_at)
    assert.deepEqual((await get(alice, draft)).json(), { data: { title: 'Two' }, uploads: [] })
  })

  test('an empty object is a valid draft', async () => {
    const draft = randomUUID()
    assert.equal((await post(alice, { draft, data: {} })).statusCode, 200)
    assert.deepEqual((await get(alice, draft)).json(), { data: {}, uploads: [] })
  })

  test('the draft UUID names one draft however it is spelled', async () => {
    const draft = randomUUID()
    assert.equal((await post(alice, { draft: draft.toUpperCase(), data: { a: 1 } })).statusCode, 200)
    const file = await upload(site, alice, 'media', png(), { draft })
    const res = await get(alice, draft.toUpperCase())
    assert.equal(res.statusCode, 200)
    const body = res.json() as { data: unknown; uploads: { uuid: string }[] }
    assert.deepEqual(body.data, { a: 1 })
    assert.deepEqual(body.uploads.map((u) => u.uuid), [file.uuid])
    expectError(await get(bob, draft.toUpperCase()), 404)
    assert.equal((await del(alice, draft.toUpperCase())).statusCode, 200)
    expectError(await get(alice, draft), 404)
  })

  test('GET lists the pending uploads of that draft only, oldest first, as TempUploads', async () => {
    const draft = randomUUID()
    const other = randomUUID()
    await saveDraft(site, alice, draft, { title: 'With uploads' })
    const thumb = await upload(site, alice, 'thumbnail', png(), { draft, filename: 'cover.png' })
    const version = await upload(site, alice, 'version', await datapack(48), { draft, filename: 'pack.zip' })
    await upload(site, alice, 'media', png(), { draft: other })
    const res = await get(alice, draft)
    assert.equal(res.statusCode, 200)
    const body = res.json() as { data: unknown; uploads: Record<string, unknown>[] }
    assert.deepEqual(body.data, { title: 'With uploads' })
    assert.deepEqual(body.uploads, [
      { uuid: thumb.uuid, kind: 'thumbnail', filename: 'cover.png', content_type: 'image/png', url: thumb.url },
      { uuid: version.uuid, kind: 'version', filename: 'pack.zip', content_type: 'application/zip', url: version.url },
    ])
  })
})

describe('bad input', () => {
  test('missing or malformed draft UUID is 400', async () => {
    expectError(await post(alice, { data: {} }), 400, /draft/)
    expectError(await post(alice, { draft: 'not-a-uuid', data: {} }), 400, /draft/)
    expectError(await post(alice, { draft: 12345, data: {} }), 400, /draft/)
    expectError(await get(alice), 400, /draft/)
    expectError(await get(alice, 'nope'), 400, /draft/)
    expectError(await del(alice, 'nope'), 400, /draft/)
    expectError(await site.app.inject({ method: 'DELETE', url: '/api/draft/', headers: alice.headers }), 400, /draft/)
  })

  test('data missing or not an object is 400, and nothing is saved', async () => {
    const draft = randomUUID()
    for (const data of [undefined, 'text', 42, true, null, [], [{ title: 'x' }]]) {
      const payload = data === undefined ? { draft } : { draft, data }
      expectError(await post(alice, payload), 400, /data/)
    }
    expectError(await get(alice, draft), 404)
  })

  test('known form fields with the wrong type are 400', async () => {
    const draft = randomUUID()
    expectError(await post(alice, { draft, data: { title: 5 } }), 400, /data\.title must be a string/)
    expectError(await post(alice, { draft, data: { version_name: { a: 1 } } }), 400, /data\.version_name/)
    expectError(await post(alice, { draft, data: { tags: 'Medieval' } }), 400, /data\.tags must be an array of strings/)
    expectError(await post(alice, { draft, data: { tags: ['ok', 3] } }), 400, /data\.tags/)
    expectError(await get(alice, draft), 404)
  })

  test('broken JSON and a non-JSON body are 400 with a JSON error', async () => {
    const headers = { ...alice.headers, 'content-type': 'application/json' }
    expectError(await site.app.inject({ method: 'POST', url: '/api/draft/', headers, payload: '{"draft": "' }), 400, /JSON/)
    expectError(await site.app.inject({ method: 'POST', url: '/api/draft/', headers, payload: '' }), 400)
    const res = await site.app.inject({ method: 'POST', url: '/api/draft/', headers: { ...alice.headers, 'content-type': 'text/plain' }, payload: 'hi' })
    assert.ok(res.statusCode === 400 || res.statusCode === 415, res.body)
    expectError(res, res.statusCode)
  })

  test('a body over 256 KiB is 413; one just under is saved', async () => {
    const draft = randomUUID()
    const envelope = JSON.stringify({ draft, data: { description: '' } }).length
    const under = JSON.stringify({ draft, data: { description: 'x'.repeat(256 * 1024 - envelope) } })
    assert.equal(Buffer.byteLength(under), 256 * 1024)
    const headers = { ...alice.headers, 'content-type': 'application/json' }
    assert.equal((await site.app.inject({ method: 'POST', url: '/api/draft/', headers, payload: under })).statusCode, 200)

    const over = JSON.stringify({ draft, data: { description: 'y'.repeat(256 * 1024 - envelope + 1) } })
    expectError(await site.app.inject({ method: 'POST', url: '/api/draft/', headers, payload: over }), 413)
    const kept = (await get(alice, draft)).json() as { data: { description: string } }
    assert.ok(kept.data.description.startsWith('x'), 'the rejected save did not overwrite the draft')
  })
})

describe("another user's draft", () => {
  test('is 404 on GET, POST and DELETE, and stays intact', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: "Alice's" })
    const file = await upload(site, alice, 'media', png(), { draft })

    expectError(await get(bob, draft), 404, /draft not found/)
    expectError(await post(bob, { draft, data: { title: 'hijacked' } }), 404, /draft not found/)
    expectError(await del(bob, draft), 404, /draft not found/)
    expectError(await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: bob.headers, payload: { draft } }), 404)

    const res = await get(alice, draft)
    assert.equal(res.statusCode, 200)
    const body = res.json() as { data: unknown; uploads: { uuid: string }[] }
    assert.deepEqual(body.data, { title: "Alice's" })
    assert.deepEqual(body.uploads.map((u) => u.uuid), [file.uuid])
  })

  test('a missing draft is 404 on GET and DELETE', async () => {
    expectError(await get(alice, randomUUID()), 404)
    expectError(await del(alice, randomUUID()), 404)
  })
})

describe('DELETE /api/draft/', () => {
  test('removes the draft, its uploads and their stored files', async () => {
    const draft = randomUUID()
    await saveDraft(site, alice, draft, { title: 'Doomed' })
    const before = (await storedFiles(site)).length
    const a = await upload(site, alice, 'thumbnail', png(), { draft })
    const b = await upload(site, alice, 'version', await datapack(48), { draft })
    const keep = await upload(site, alice, 'media', png())
    assert.equal((await storedFiles(site)).length, before + 3)

    const res = await del(alice, draft)
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), { success: true })

    expectError(await get(alice, draft), 404)
    assert.equal((await storedFiles(site)).length, before + 1, 'only the unrelated upload is still stored')
    for (const gone of [a, b]) {
      expectError(await site.app.inject({ url: gone.url, headers: alice.headers }), 404)
      const row = await site.app.db.selectFrom('uploads').select('id').where('id', '=', gone.uuid).executeTakeFirst()
      assert.equal(row, undefined)
    }
    const kept = await site.app.db.selectFrom('uploads').select('id').where('id', '=', keep.uuid).executeTakeFirst()
    assert.ok(kept, 'an upload outside the draft survives')
    expectError(await del(alice, draft), 404, /draft not found/)
  })
})

describe('stored data that is not an object', () => {
  // Saves are checked to be objects (see "bad input"), so only a row changed outside the service can hold anything
  // else. Every reader of a draft goes through one function, so they agree: an empty draft, never a 500.
  test('reads as an empty draft on GET, in My drafts, on the create page and when publishing', async () => {
    for (const stored of ['not json', '[1, 2]', '"text"', 'null', '42']) {
      const draft = randomUUID()
      await saveDraft(site, alice, draft, { title: 'Before damage', version_name: '1' })
      await site.app.db.updateTable('drafts').set({ data: stored }).where('id', '=', draft).execute()

      const loaded = await get(alice, draft)
      assert.equal(loaded.statusCode, 200, `${stored}: ${loaded.body}`)
      assert.deepEqual((loaded.json() as { data: unknown }).data, {}, stored)

      const listed = (await site.app.inject({ url: '/api/drafts/', headers: alice.headers })).json() as { draft: string; title: string | null }[]
      assert.equal(listed.find((d) => d.draft === draft)?.title, null, stored)

      const page = await site.app.inject({ url: `/create/${draft}/`, headers: alice.headers })
      assert.equal(page.statusCode, 200, stored)
      assert.doesNotMatch(page.body, /Before damage/, stored)

      const published = await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: alice.headers, payload: { draft } })
      expectError(published, 400, /missing: title, version_name, a version upload$/)
      assert.equal((await del(alice, draft)).statusCode, 200)
    }
  })
})
