// Editing a pack: PATCH /api/packs/{ns}/{pack_id}/ and the
// edit page. Fields and their limits, the revision check (a stale or racing
// edit is a 409 and changes nothing), permissions (someone else's pack is 404,
// staff may edit anyone's), thumbnail and gallery replaced with the old files
// deleted from storage, the update-check's name following the title on every
// instance, the audit log, CSRF for sessions, and the page without JavaScript.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { until } from '../helpers/wait.js'
import { randomUUID } from 'node:crypto'
import { buildApp } from '../../src/app.js'
import { expectError, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, png } from '../helpers/fixtures.js'
import { pathOf, publishPack, saveDraft, seedTags, upload, type PackJson, type Uploaded } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser
let root: TestUser

before(async () => {
  ;({ site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'] }))
  await seedTags(site)
})
after(() => site.close())

type Headers = Record<string, string>
const packUrl = (pack: Pick<PackJson, 'namespace' | 'pack_id'>) => `/api/packs/${pack.namespace}/${pack.pack_id}/`
const edit = (pack: PackJson, headers: Headers, payload: unknown) => site.app.inject({ method: 'PATCH', url: packUrl(pack), headers, payload: payload as object })
const getPack = async (pack: PackJson, headers: Headers = alice.headers): Promise<PackJson> => {
  const res = await site.app.inject({ url: packUrl(pack), headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as PackJson
}
const fileIdOf = (url: string) => /\/api\/files\/([0-9a-f-]{36})\/$/.exec(url)![1]!
const fetchFile = (url: string) => site.app.inject({ url: pathOf(url), headers: site.gate })

let colors = 0
/** A PNG unlike every other one made here, so no two uploads are the same bytes. */
const uniquePng = () => png(1, 1, [++colors % 256, Math.floor(colors / 256) % 256, 7])

/** A pack with a thumbnail and `media` gallery images, published through a draft as the create page does. */
async function publishWithGallery(user: TestUser, title: string, media: number): Promise<PackJson> {
  const draft = randomUUID()
  await saveDraft(site, user, draft, { title, version_name: '1.0' })
  await upload(site, user, 'version', await datapack(48), { draft })
  await upload(site, user, 'thumbnail', uniquePng(), { draft, filename: 'thumb.png' })
  for (let i = 1; i <= media; i++) await upload(site, user, 'media', uniquePng(), { draft, filename: `shot-${i}.png` })
  const res = await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: user.headers, payload: { draft } })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as PackJson
}

interface AuditJson { items: { actor: string; action: string; target: string; details: Record<string, unknown> }[] }
async function auditOf(pack: PackJson): Promise<AuditJson['items']> {
  const res = await site.app.inject({ url: `/api/audit/?action=pack.edit&target=${pack.namespace}:${pack.pack_id}`, headers: root.headers })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as AuditJson).items
}

/** Signs in with the JSON form: the session cookie and its CSRF token. */
async function signIn(user: TestUser): Promise<{ cookie: string; csrf: string }> {
  const res = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
  assert.equal(res.statusCode, 200, res.body)
  const session = res.cookies.find((c) => c.name === 'packs_session')?.value
  assert.ok(session, 'a session cookie')
  return { cookie: `packs_session=${session}`, csrf: (res.json() as { csrf_token: string }).csrf_token }
}

describe('editing the page fields', () => {
  test('the owner changes title, summary, description, category and tags; pack_id, updated_at stay; revision counts', async () => {
    const pack = await publishPack(site, alice, { title: 'Old Title', summary: 'old', description: 'old text', category: 'theme', tags: ['Medieval'] })
    assert.equal(pack.revision, 1)
    const res = await edit(pack, alice.headers, {
      revision: 1, title: '  Shiny New Title  ', summary: ' A summary ', description: '# New\n\ntext', category: 'KIND', tags: ['space', 'Adventure', 'SPACE'],
    })
    assert.equal(res.statusCode, 200, res.body)
    const edited = res.json() as PackJson
    assert.equal(edited.title, 'Shiny New Title')
    assert.equal(edited.pack_id, 'old-title', 'the pack id never follows the title')
    assert.equal(edited.id, 'alice:old-title')
    assert.equal(edited.summary, 'A summary')
    assert.equal(edited.description, '# New\n\ntext')
    assert.equal(edited.category?.key, 'kind')
    assert.deepEqual(edited.tags.map((t) => t.name), ['Adventure', 'Space'])
    assert.equal(edited.revision, 2)
    assert.equal(edited.updated_at, pack.updated_at, 'updated_at tells of new versions, not of page edits')
    assert.deepEqual(await getPack(edited), edited, 'what the edit answered is what is stored')

    // null and "" both clear the category; an empty list clears the tags.
    const cleared = await edit(edited, alice.headers, { revision: 2, category: null, tags: [] })
    assert.equal(cleared.statusCode, 200, cleared.body)
    assert.equal((cleared.json() as PackJson).category, null)
    assert.deepEqual((cleared.json() as PackJson).tags, [])
    assert.equal((cleared.json() as PackJson).revision, 3)
    const again = await edit(edited, alice.headers, { revision: 3, category: '' })
    assert.equal(again.statusCode, 200, again.body)
    assert.equal((again.json() as PackJson).revision, 3, 'clearing what is already clear changes nothing, so no new revision')
  })

  test('the audit log records who changed which fields: old and new for short ones, "changed" for the description', async () => {
    const pack = await publishPack(site, alice, { title: 'Audited', summary: 's1', description: 'd1', tags: ['Space'] })
    assert.equal((await edit(pack, alice.headers, { revision: 1, title: 'Audited Two', description: 'd2', tags: ['Space', 'Medieval'], summary: 's1' })).statusCode, 200)
    const entries = await auditOf(pack)
    assert.equal(entries.length, 1)
    const entry = entries[0]!
    assert.equal(entry.actor, 'alice')
    assert.equal(entry.target, 'alice:audited')
    assert.deepEqual(entry.details, {
      title: { from: 'Audited', to: 'Audited Two' },
      description: 'changed',
      tags: { from: ['Space'], to: ['Medieval', 'Space'] },
    }, 'unchanged fields (the summary) are not listed')
    // An edit that changes nothing records nothing and keeps the revision.
    const same = await edit(pack, alice.headers, { revision: 2, title: 'Audited Two ', summary: 's1' })
    assert.equal(same.statusCode, 200, same.body)
    assert.equal((same.json() as PackJson).revision, 2)
    assert.equal((await auditOf(pack)).length, 1)
  })

  test('invalid input is a 400 with a detail, and changes nothing', async () => {
    const pack = await publishPack(site, alice, { title: 'Strict', summary: 'kept' })
    const cases: [unknown, RegExp][] = [
      [{ revision: 1, title: '   ' }, /title must not be empty/],
      [{ revision: 1, title: 'x'.repeat(201) }, /title is longer than 200/],
      [{ revision: 1, summary: 'x'.repeat(301) }, /summary is longer than 300/],
      [{ revision: 1, description: 'x'.repeat(100_001) }, /description is longer than 100000/],
      [{ revision: 1, category: 'nope' }, /unknown category "nope"/],
      [{ revision: 1, tags: ['Space', 'Dragons', 'dragons', 'Elves'] }, /unknown tags "Dragons", "Elves"/],
      [{ revision: 1, tags: ['x'.repeat(500)] }, /unknown tag "x{60}…"/],
      [{ revision: 1, tags: [{ name: 'Space' }] }, /tags/],
      [{ revision: 1, media: 'not a list' }, /./],
      [{ revision: 1, thumbnail: 'not-an-id' }, /thumbnail "not-an-id" is not a pending thumbnail upload of yours/],
      [{ revision: 1, thumbnail: randomUUID() }, /not a pending thumbnail upload/],
      [{ revision: 1, media: ['a', 'b', 'c', 'd', 'e', 'f', 'g'] }, /media "a", "b", "c", "d", "e" and 2 more are neither/],
      [{ revision: 1, pack_id: 'renamed' }, /./],
      [{ title: 'No revision' }, /revision/],
      [{ revision: 'one' }, /revision/],
      [{ revision: 0 }, /revision/],
      [{ revision: 1e12 }, /revision/],
      [{ revision: 1.5 }, /revision/],
      [[1, 2], /./],
    ]
    for (const [payload, detail] of cases) expectError(await edit(pack, alice.headers, payload), 400, detail)
    const unchanged = await getPack(pack)
    assert.equal(unchanged.title, 'Strict')
    assert.equal(unchanged.summary, 'kept')
    assert.equal(unchanged.revision, 1)
    assert.deepEqual(await auditOf(pack), [])
  })

  test('huge lists of names and ids are answered quickly, with a short detail', async () => {
    const pack = await publishPack(site, alice, { title: 'Hostile Lists' })
    const started = Date.now()
    const tags = await edit(pack, alice.headers, { revision: 1, tags: Array.from({ length: 20_000 }, (_, i) => `t${i}`) })
    expectError(tags, 400, /^unknown tags "t0", "t1", "t2", "t3", "t4" and 19995 more: /)
    const media = await edit(pack, alice.headers, { revision: 1, media: Array.from({ length: 5_000 }, () => randomUUID()) })
    expectError(media, 400, /and 4995 more are neither/)
    const repeated = await edit(pack, alice.headers, { revision: 1, media: Array.from({ length: 5_000 }, () => 'same') })
    expectError(repeated, 400, /^media names "same" more than once$/)
    assert.ok(tags.body.length < 400 && media.body.length < 600, 'the details stay short')
    assert.ok(Date.now() - started < 10_000, `answered in ${Date.now() - started} ms`)
    assert.equal((await getPack(pack)).revision, 1)
  })

  test('a title or summary over today\'s limit that the pack already has can be sent back unchanged', async () => {
    // Published through the API, which never bounded the summary.
    const pack = await publishPack(site, alice, { title: 'Long Summary', summary: 'y'.repeat(400) })
    const res = await edit(pack, alice.headers, { revision: 1, summary: 'y'.repeat(400), description: 'fixed a typo' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((res.json() as PackJson).description, 'fixed a typo')
  })
})

describe('conflicting edits', () => {
  test('an edit from a stale revision is a 409 naming the current one, and changes nothing', async () => {
    const pack = await publishPack(site, alice, { title: 'Contested', summary: 'first' })
    assert.equal((await edit(pack, alice.headers, { revision: 1, summary: 'from tab one' })).statusCode, 200)
    const stale = await edit(pack, alice.headers, { revision: 1, summary: 'from tab two', title: 'Tab Two' })
    expectError(stale, 409, /changed elsewhere.*revision 2.*revision 1.*reload/)
    const now = await getPack(pack)
    assert.equal(now.summary, 'from tab one')
    assert.equal(now.title, 'Contested')
    assert.equal(now.revision, 2)
    // A revision from the future is as stale as one from the past.
    expectError(await edit(pack, alice.headers, { revision: 99, summary: 'x' }), 409, /revision 2/)
    // Staff edits count too: the owner's page from before is stale afterwards.
    assert.equal((await edit(pack, root.headers, { revision: 2, summary: 'staff fix' })).statusCode, 200)
    expectError(await edit(pack, alice.headers, { revision: 2, summary: 'owner' }), 409)
  })

  test('two edits racing from the same revision: exactly one wins, the other is a 409', async () => {
    const pack = await publishPack(site, alice, { title: 'Race Track' })
    for (let round = 0; round < 5; round++) {
      const revision = (await getPack(pack)).revision
      const results = await Promise.all(['A', 'B', 'C'].map((tab) => edit(pack, alice.headers, { revision, summary: `${tab}${round}` })))
      const codes = results.map((r) => r.statusCode).sort()
      assert.deepEqual(codes, [200, 409, 409], results.map((r) => r.body).join('\n'))
      const winner = results.find((r) => r.statusCode === 200)!.json() as PackJson
      const stored = await getPack(pack)
      assert.equal(stored.summary, winner.summary)
      assert.equal(stored.revision, revision + 1)
    }
    assert.equal((await auditOf(pack)).length, 5, 'one audit entry per successful edit')
  })
})

describe('who may edit', () => {
  test("someone else's pack is 404 (as a missing one); anonymous is 401; staff may edit anyone's", async () => {
    const pack = await publishPack(site, alice, { title: 'Mine Only' })
    expectError(await edit(pack, bob.headers, { revision: 1, title: 'Stolen' }), 404, /pack not found/)
    expectError(await edit({ ...pack, pack_id: 'no-such-pack' }, bob.headers, { revision: 1, title: 'x' }), 404, /pack not found/)
    expectError(await edit(pack, site.gate, { revision: 1, title: 'Anon' }), 401)
    // Even a bad body from someone else says only "not found".
    expectError(await edit(pack, bob.headers, { revision: 1, title: '' }), 404)
    const staff = await edit(pack, root.headers, { revision: 1, title: 'Renamed by Staff' })
    assert.equal(staff.statusCode, 200, staff.body)
    assert.equal((staff.json() as PackJson).owner, 'alice', 'the owner stays')
    const [entry] = await auditOf(pack)
    assert.equal(entry?.actor, 'root')
    // Any case in the path names the same pack.
    const upper = await site.app.inject({ method: 'PATCH', url: '/api/packs/ALICE/MINE-ONLY/', headers: alice.headers, payload: { revision: 2, summary: 'upper' } })
    assert.equal(upper.statusCode, 200, upper.body)
  })

  test('a hidden pack: its owner and staff still edit it, it stays hidden, others still get 404', async () => {
    const pack = await publishPack(site, alice, { title: 'Under Wraps' })
    const hide = await site.app.inject({ method: 'POST', url: `${packUrl(pack)}hide/`, headers: root.headers, payload: { reason: 'test' } })
    assert.equal(hide.statusCode, 200, hide.body)
    const res = await edit(pack, alice.headers, { revision: 1, title: 'Still Under Wraps' })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((res.json() as PackJson).hidden, true)
    assert.equal((await edit(pack, root.headers, { revision: 2, summary: 'staff' })).statusCode, 200)
    expectError(await site.app.inject({ url: packUrl(pack), headers: bob.headers }), 404)
    expectError(await edit(pack, bob.headers, { revision: 3, summary: 'x' }), 404, /pack not found/)
    expectError(await site.app.inject({ url: `${packUrl(pack)}latest`, headers: site.gate }), 404)
    const listed = await site.app.inject({ url: '/api/packs/?q=wraps', headers: site.gate })
    assert.equal(listed.json().total, 0)
  })

  test('a read-only token may not edit (403); a session needs the CSRF token', async () => {
    const pack = await publishPack(site, alice, { title: 'Token Reach' })
    const { cookie, csrf } = await signIn(alice)
    const created = await site.app.inject({ method: 'POST', url: '/api/tokens/', headers: { cookie, 'x-csrf-token': csrf }, payload: { name: 'ro', scope: 'read' } })
    assert.equal(created.statusCode, 201, created.body)
    const readOnly = { authorization: (created.json() as { authorization: string }).authorization }
    expectError(await edit(pack, readOnly, { revision: 1, title: 'Nope' }), 403, /read-only/)
    expectError(await edit(pack, { cookie }, { revision: 1, title: 'No CSRF' }), 403, /CSRF/)
    expectError(await edit(pack, { cookie, 'x-csrf-token': 'wrong' }, { revision: 1, title: 'Bad CSRF' }), 403, /CSRF/)
    assert.equal((await getPack(pack)).title, 'Token Reach')
    const ok = await edit(pack, { cookie, 'x-csrf-token': csrf }, { revision: 1, title: 'With CSRF' })
    assert.equal(ok.statusCode, 200, ok.body)
    assert.equal((ok.json() as PackJson).title, 'With CSRF')
  })
})

describe('thumbnail and gallery', () => {
  test('a new thumbnail replaces the old one, whose row and stored bytes go; null removes it', async () => {
    const pack = await publishPack(site, alice, { title: 'Thumbs' }, { thumbnail: true })
    const oldUrl = pack.thumbnail_url!
    assert.equal((await fetchFile(oldUrl)).statusCode, 200)
    const before = await storedFiles(site)
    // Uploaded without a draft, as the edit page does.
    const fresh = await upload(site, alice, 'thumbnail', uniquePng(), { filename: 'new-thumb.png' })
    const res = await edit(pack, alice.headers, { revision: 1, thumbnail: fresh.uuid.toUpperCase() })
    assert.equal(res.statusCode, 200, res.body)
    const edited = res.json() as PackJson
    assert.equal(fileIdOf(edited.thumbnail_url!), fresh.fileId)
    assert.equal((await fetchFile(oldUrl)).statusCode, 404, 'the old thumbnail is gone')
    assert.equal((await fetchFile(edited.thumbnail_url!)).statusCode, 200)
    const afterReplace = await storedFiles(site)
    assert.equal(afterReplace.length, before.length, 'one file in (the new thumbnail), one file out (the old one)')
    // The upload is no longer pending: deleting it as an upload finds nothing, and its file stays.
    expectError(await site.app.inject({ method: 'POST', url: `/api/uploads/${fresh.uuid}/delete/`, headers: alice.headers, payload: {} }), 404)
    assert.equal((await fetchFile(edited.thumbnail_url!)).statusCode, 200)
    // Sending the current thumbnail back changes nothing.
    const same = await edit(pack, alice.headers, { revision: 2, thumbnail: fresh.fileId })
    assert.equal((same.json() as PackJson).revision, 2)

    const removed = await edit(pack, alice.headers, { revision: 2, thumbnail: null })
    assert.equal(removed.statusCode, 200, removed.body)
    assert.equal((removed.json() as PackJson).thumbnail_url, null)
    assert.equal((await fetchFile(edited.thumbnail_url!)).statusCode, 404)
    assert.equal((await storedFiles(site)).length, before.length - 1)
    const details = (await auditOf(pack)).map((e) => e.details.thumbnail)
    assert.deepEqual(details, ['removed', 'replaced'])
  })

  test('only a pending thumbnail upload of the caller will do: not a media upload, not someone else\'s', async () => {
    const pack = await publishPack(site, alice, { title: 'Picky Thumbs' })
    const media = await upload(site, alice, 'media', uniquePng())
    const bobs = await upload(site, bob, 'thumbnail', uniquePng())
    expectError(await edit(pack, alice.headers, { revision: 1, thumbnail: media.uuid }), 400, /not a pending thumbnail upload of yours/)
    expectError(await edit(pack, alice.headers, { revision: 1, thumbnail: bobs.uuid }), 400, /not a pending thumbnail upload of yours/)
    expectError(await edit(pack, alice.headers, { revision: 1, media: [bobs.uuid] }), 400, /neither in this pack's gallery nor a pending media upload of yours/)
    // Bob's upload is still his and still pending.
    const deleted = await site.app.inject({ method: 'POST', url: `/api/uploads/${bobs.uuid}/delete/`, headers: bob.headers, payload: {} })
    assert.equal(deleted.statusCode, 200, deleted.body)
  })

  test('the gallery is replaced as sent: reordered, new uploads added (draft or not), removed media deleted from storage', async () => {
    const pack = await publishWithGallery(alice, 'Gallery Pack', 3)
    const [a, b, c] = pack.media.map((m) => m.id) as [string, string, string]
    assert.deepEqual(pack.media.map((m) => m.filename), ['shot-1.png', 'shot-2.png', 'shot-3.png'])
    const before = await storedFiles(site)
    const added: Uploaded = await upload(site, alice, 'media', uniquePng(), { filename: 'added.png' })
    const addedInDraft = await upload(site, alice, 'media', uniquePng(), { draft: randomUUID(), filename: 'from-draft.png' })

    const res = await edit(pack, alice.headers, { revision: 1, media: [c, added.uuid, a, addedInDraft.uuid] })
    assert.equal(res.statusCode, 200, res.body)
    const edited = res.json() as PackJson
    assert.deepEqual(edited.media.map((m) => m.filename), ['shot-3.png', 'added.png', 'shot-1.png', 'from-draft.png'])
    assert.deepEqual(edited.media.map((m) => m.id), [c, added.fileId, a, addedInDraft.fileId])
    const removedUrl = pack.media[1]!.url
    assert.equal((await fetchFile(removedUrl)).statusCode, 404, 'the removed item\'s file is gone')
    for (const m of edited.media) assert.equal((await fetchFile(m.url)).statusCode, 200)
    assert.equal((await storedFiles(site)).length, before.length + 1, 'two added, one removed')
    assert.deepEqual(await getPack(pack).then((p) => p.media.map((m) => m.id)), [c, added.fileId, a, addedInDraft.fileId])

    // A pure reorder, then emptying the gallery.
    assert.deepEqual((await edit(pack, alice.headers, { revision: 2, media: [a, c, added.fileId, addedInDraft.fileId] })).json().media.map((m: { id: string }) => m.id),
      [a, c, added.fileId, addedInDraft.fileId])
    const empty = await edit(pack, alice.headers, { revision: 3, media: [] })
    assert.equal(empty.statusCode, 200, empty.body)
    assert.deepEqual((empty.json() as PackJson).media, [])
    assert.equal((await storedFiles(site)).length, before.length - 3, 'every gallery file is gone (three published, two added)')
    const details = (await auditOf(pack)).map((e) => e.details.media)
    assert.deepEqual(details, [
      { added: 0, removed: 4, reordered: false },
      { added: 0, removed: 0, reordered: true },
      { added: 2, removed: 1, reordered: true },
    ])
  })

  test('repeated or unknown gallery ids, a consumed upload and a thumbnail upload in the gallery are refused', async () => {
    const pack = await publishWithGallery(alice, 'Strict Gallery', 1)
    const [a] = pack.media.map((m) => m.id) as [string]
    const thumb = await upload(site, alice, 'thumbnail', uniquePng())
    const other = await publishWithGallery(alice, 'Other Gallery', 1)
    expectError(await edit(pack, alice.headers, { revision: 1, media: [a, a.toUpperCase()] }), 400, /media names .* more than once/)
    expectError(await edit(pack, alice.headers, { revision: 1, media: [a, thumb.uuid] }), 400, /neither in this pack's gallery/)
    expectError(await edit(pack, alice.headers, { revision: 1, media: [other.media[0]!.id] }), 400, /neither in this pack's gallery/,
    )
    const fresh = await upload(site, alice, 'media', uniquePng())
    assert.equal((await edit(pack, alice.headers, { revision: 1, media: [a, fresh.uuid] })).statusCode, 200)
    // Used once, the upload is no longer pending: naming it again finds nothing.
    expectError(await edit(pack, alice.headers, { revision: 2, media: [fresh.uuid] }), 400, /neither in this pack's gallery/)
    assert.equal((await getPack(other)).media.length, 1, 'the other pack is untouched')
  })

  test('staff add their own uploads to someone else\'s pack', async () => {
    const pack = await publishPack(site, alice, { title: 'Staff Gallery' })
    const staffUpload = await upload(site, root, 'media', uniquePng(), { filename: 'by-staff.png' })
    const res = await edit(pack, root.headers, { revision: 1, media: [staffUpload.uuid] })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual((res.json() as PackJson).media.map((m) => m.filename), ['by-staff.png'])
  })
})

describe('the update-check follows the title', () => {
  const latest = (pack: PackJson, app = site.app) => app.inject({ url: `${packUrl(pack)}latest`, headers: site.gate })

  test('its name changes at once after a title edit; the pack_id stays', async () => {
    const pack = await publishPack(site, alice, { title: 'Before Rename' })
    assert.equal((await latest(pack)).json().name, 'Before Rename')
    assert.equal((await edit(pack, alice.headers, { revision: 1, title: 'After Rename' })).statusCode, 200)
    const answer = (await latest(pack)).json()
    assert.equal(answer.name, 'After Rename')
    assert.equal(answer.pack_id, 'before-rename', 'the id players use stays')
  })

  test('on another instance too, as soon as the change reaches it', async (t) => {
    if (site.config.redisUrl === null) return t.skip('needs REDIS_URL (the scaled combination): one instance alone has nothing to share')
    const other = await buildApp(site.config, { logger: false, sweep: false })
    try {
      await other.ready()
      const pack = await publishPack(site, alice, { title: 'Two Instance Rename' })
      assert.equal((await latest(pack, other)).json().name, 'Two Instance Rename', 'the other instance caches the answer')
      assert.equal((await edit(pack, alice.headers, { revision: 1, title: 'Renamed Everywhere' })).statusCode, 200)
      // By Redis pub/sub, within milliseconds (update-check-feed.test.ts).
      await until(async () => (await latest(pack, other)).json().name === 'Renamed Everywhere' || undefined, 'the new name on the other instance', 3000)
    } finally {
      await other.close()
    }
  })
})

describe('the edit page', () => {
  const pageOf = (pack: PackJson, headers: Headers) =>
    site.app.inject({ url: `/packs/${pack.namespace}/${pack.pack_id}/edit/`, headers: { ...headers, accept: 'text/html' } })

  test('owner and staff get the form with the pack\'s values; others the 404 page; anonymous a sign-in redirect', async () => {
    const pack = await publishWithGallery(alice, 'Page <Edit> & Co', 2)
    for (const headers of [alice.headers, root.headers]) {
      const res = await pageOf(pack, headers)
      assert.equal(res.statusCode, 200, res.body)
      assert.match(res.body, /<form id="edit-form"[^>]* method="post"/)
      assert.match(res.body, /value="Page &lt;Edit&gt; &amp; Co"/, 'the title, escaped')
      assert.match(res.body, new RegExp(`data-revision="${pack.revision}"`))
      for (const m of pack.media) assert.ok(res.body.includes(`data-media="${m.id}"`), 'each gallery item')
      assert.match(res.body, />Move up</)
      assert.match(res.body, />Save changes</)
      assert.match(res.body, /<noscript>/)
      assert.match(res.body, /edit-[A-Za-z0-9_-]+\.js/, 'the page script')
    }
    const other = await pageOf(pack, bob.headers)
    assert.equal(other.statusCode, 404)
    assert.doesNotMatch(other.body, /Page &lt;Edit&gt;/)
    const anonymous = await pageOf(pack, site.gate)
    assert.equal(anonymous.statusCode, 303)
    assert.match(String(anonymous.headers.location), /^\/login\/\?next=/)
  })

  test('the pack page links to it for owner and staff only', async () => {
    const pack = await publishPack(site, alice, { title: 'Linked Edit' })
    const link = 'href="/packs/alice/linked-edit/edit/"'
    for (const [headers, shown] of [[alice.headers, true], [root.headers, true], [bob.headers, false], [site.gate, false]] as const) {
      const res = await site.app.inject({ url: '/packs/alice/linked-edit/', headers: { ...headers, accept: 'text/html' } })
      assert.equal(res.statusCode, 200)
      assert.equal(res.body.includes(link), shown, res.body.includes(link) ? 'shown' : 'not shown')
    }
  })

  test('without JavaScript the form saves the text fields; a stale revision shows the conflict; CSRF is required', async () => {
    const pack = await publishPack(site, alice, { title: 'No Script', summary: 'old', tags: ['Space'] })
    const { cookie, csrf } = await signIn(alice)
    const post = (fields: Record<string, string>) => site.app.inject({
      method: 'POST', url: '/packs/alice/no-script/edit/',
      headers: { cookie, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams(fields).toString(),
    })
    const form = { revision: '1', title: 'No Script Renamed', summary: 'new', category: 'theme', description: 'line 1\r\nline 2' }
    const noCsrf = await post(form)
    assert.equal(noCsrf.statusCode, 403)
    const ok = await post({ ...form, csrf_token: csrf })
    assert.equal(ok.statusCode, 303, ok.body)
    assert.equal(ok.headers.location, '/packs/alice/no-script/')
    const saved = await getPack(pack)
    assert.equal(saved.title, 'No Script Renamed')
    assert.equal(saved.summary, 'new')
    assert.equal(saved.category?.key, 'theme')
    assert.equal(saved.description, 'line 1\nline 2')
    assert.deepEqual(saved.tags.map((t) => t.name), ['Space'], 'tags are not in the plain form and stay')

    const stale = await post({ ...form, summary: 'stale', csrf_token: csrf })
    assert.equal(stale.statusCode, 409)
    assert.match(stale.body, /changed elsewhere/)
    assert.match(stale.body, /id="edit-reload"/)
    assert.match(stale.body, /value="stale"/, 'what was typed is shown again')
    const bad = await post({ ...form, revision: '2', title: ' ', csrf_token: csrf })
    assert.equal(bad.statusCode, 400)
    assert.match(bad.body, /Not saved: Title must not be empty\./)
    assert.equal((await getPack(pack)).summary, 'new')
    const bobs = await signIn(bob)
    const bobPost = await site.app.inject({
      method: 'POST', url: '/packs/alice/no-script/edit/',
      headers: { cookie: bobs.cookie, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ ...form, revision: '2', csrf_token: bobs.csrf }).toString(),
    })
    assert.equal(bobPost.statusCode, 404)
  })
})
