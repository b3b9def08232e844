// Whose bytes an archive is (src/packs/archive-claims.ts). The by-hash
// lookups name a pack from an archive's hash alone, and players' updaters
// replace files with what they name, so a copy of someone's archive must never
// take over their players: the pack that first published the bytes claims
// them; another owner publishing the same bytes is a 409; the lookups (ours
// and Modrinth's version_file routes) answer only the claiming pack, or "not
// found" when it is gone, hidden or disabled; the claim is held for 30 days
// after the pack no longer has the bytes; staff may allow a copy from the CLI.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { cliEnvOf, expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, saveDraft, upload, type PackJson } from '../helpers/packs.js'
import { runCli } from '../helpers/server.js'

const DAY = 86_400_000
let now = Date.parse('2026-11-01T00:00:00.000Z')
let site: TestSite
let alice: TestUser
let mallory: TestUser
let bob: TestUser
let root: TestUser

before(async () => {
  ;({ site, alice, mallory, bob, root } = await siteWith({ users: ['alice', 'mallory', 'bob'], staff: ['root'], clock: () => now }))
})
after(() => site.close())

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')
const sha1 = (data: Buffer) => createHash('sha1').update(data).digest('hex')

const packs = (args: string[]) => runCli(args, undefined, cliEnvOf(site))

/** Publishes a draft with this archive; the raw answer, so a refusal can be checked. */
async function tryPublish(user: TestUser, title: string, archive: Buffer) {
  const draft = randomUUID()
  await saveDraft(site, user, draft, { title, version_name: '1.0' })
  await upload(site, user, 'version', archive, { draft })
  return site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: user.headers, payload: { draft } })
}

function tryAddVersion(user: TestUser, packPath: string, name: string, archive: Buffer) {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: archive, filename: `${name}.zip`, contentType: 'application/zip' }])
  return site.app.inject({ method: 'POST', url: `/api/packs/${packPath}/versions/`, headers: { ...user.headers, ...body.headers }, payload: body.payload })
}

const byHash = (hash: string) => site.app.inject({ url: `/api/update-check/by-hash/${hash}`, headers: site.gate })
const hashBatch = (hashes: string[]) => site.app.inject({ method: 'POST', url: '/api/update-check/by-hash/', headers: site.gate, payload: { hashes } })
const modrinth = (path: string, init: { method?: 'GET' | 'POST'; payload?: object } = {}) =>
  site.app.inject({ method: init.method ?? 'GET', url: `/api/modrinth/v2${path}`, headers: site.gate, ...(init.payload ? { payload: init.payload } : {}) })

/** What every lookup by hash says the archive is: our single and batch lookups, Modrinth's version_file and its update. */
async function lookups(archive: Buffer): Promise<string[]> {
  const hash = sha256(archive)
  const single = await byHash(hash)
  const batch = (await hashBatch([hash, sha1(archive)])).json() as { hashes: Record<string, { namespace: string; pack_id: string } | null> }
  const file = await modrinth(`/version_file/${hash}?algorithm=sha256`)
  const update = await modrinth(`/version_file/${hash}/update?algorithm=sha256`, { method: 'POST', payload: {} })
  const updates = (await modrinth('/version_files/update', { method: 'POST', payload: { hashes: [hash], algorithm: 'sha256' } })).json() as Record<string, { project_id: string }>
  const name = (m: { namespace: string; pack_id: string } | null | undefined) => (m ? `${m.namespace}:${m.pack_id}` : 'none')
  // A Modrinth version names its project by id; the project's slug is namespace:pack_id.
  const slugOf = async (projectId: string) => ((await modrinth(`/project/${projectId}`)).json() as { slug: string }).slug
  const projectOf = async (res: typeof file) => {
    if (res.statusCode === 404) return 'none'
    assert.equal(res.statusCode, 200, res.body)
    return slugOf((res.json() as { project_id: string }).project_id)
  }
  const updatesProject = updates[hash] ? await slugOf(updates[hash].project_id) : 'none'
  return [
    single.statusCode === 404 ? 'none' : name(single.json() as { namespace: string; pack_id: string }),
    name(batch.hashes[hash]),
    name(batch.hashes[sha1(archive)]),
    await projectOf(file),
    await projectOf(update),
    updatesProject,
  ]
}

describe('an archive belongs to the pack that first published it', () => {
  let original: Buffer
  let glow: PackJson

  before(async () => {
    original = await datapack(48)
    glow = await publishPack(site, alice, { title: 'Glow', version_name: '1.0' }, { archive: original })
  })

  test('another owner publishing the same bytes is a 409 that says so, as a new pack and as a new version; nothing is kept', async () => {
    const detail = expectError(await tryPublish(mallory, 'Glow Copy', original), 409, /already|first published/)
    assert.match(detail, new RegExp(`SHA-256 ${sha256(original)}`))
    assert.match(detail, /alice:glow/, 'a listed pack is named')
    assert.equal((await site.app.inject({ url: '/api/packs/mallory/glow-copy/', headers: site.gate })).statusCode, 404, 'no pack was made')

    const own = await publishPack(site, mallory, { title: 'Mallory Pack', version_name: '1.0' })
    expectError(await tryAddVersion(mallory, `${own.namespace}/${own.pack_id}`, '2.0', original), 409, /first published by another owner's pack alice:glow/)
    const pack = (await site.app.inject({ url: `/api/packs/${own.namespace}/${own.pack_id}/`, headers: site.gate })).json() as PackJson
    assert.deepEqual(pack.versions.map((v) => v.name), ['1.0'], 'the refused version was not added')
  })

  test('the same owner may re-use an archive in another of their packs; the lookups keep naming the first', async () => {
    const again = await tryPublish(alice, 'Glow Again', original)
    assert.equal(again.statusCode, 201, again.body)
    assert.deepEqual(await lookups(original), Array(6).fill('alice:glow'))
  })

  test('a copy staff allowed never takes over: the lookups name the first pack, then nothing once it is gone, hidden or disabled', async () => {
    // Staff allow mallory's copy from the CLI; the audit log says who and what.
    const allowed = await packs(['archive', 'allow', sha256(original).toUpperCase(), 'mallory', '--reason', 'a mirror alice agreed to'])
    assert.equal(allowed.code, 0, allowed.stderr)
    assert.match(allowed.stdout, /mallory may now publish the archive [0-9a-f]{64} \(it belongs to alice:glow\)/)
    const audit = (await site.app.inject({ url: '/api/audit/?target_type=archive', headers: root.headers })).json() as { items: Array<{ action: string; target: string; details: Record<string, unknown> }> }
    assert.deepEqual(audit.items.map((e) => [e.action, e.target, e.details.user, e.details.reason]),
      [['archive.allow-copy', sha256(original), 'mallory', 'a mirror alice agreed to']])

    const copyRes = await tryPublish(mallory, 'Glow Copy', original)
    assert.equal(copyRes.statusCode, 201, copyRes.body)
    assert.equal((await tryAddVersion(mallory, 'mallory/glow-copy', '2.0', await datapack(48))).statusCode, 201)
    assert.deepEqual(await lookups(original), Array(6).fill('alice:glow'), 'the copy published later is never the answer')

    // Staff hide alice's pack: not found, never mallory's.
    assert.equal((await packs(['pack', 'hide', 'alice:glow'])).code, 0)
    assert.deepEqual(await lookups(original), Array(6).fill('none'))
    assert.equal((await packs(['pack', 'unhide', 'alice:glow'])).code, 0)
    // alice's account disabled: the same.
    assert.equal((await packs(['user', 'disable', 'alice'])).code, 0)
    assert.deepEqual(await lookups(original), Array(6).fill('none'))
    assert.equal((await packs(['user', 'enable', 'alice'])).code, 0)
    assert.deepEqual(await lookups(original), Array(6).fill('alice:glow'))

    // alice deletes the version 1.0 (her other pack "Glow Again" still has the bytes, but it is not the first).
    const versionId = glow.versions.find((v) => v.name === '1.0')!.id
    assert.equal((await tryAddVersion(alice, 'alice/glow', '1.1', await datapack(48))).statusCode, 201)
    const deleted = await site.app.inject({ method: 'DELETE', url: `/api/packs/alice/glow/versions/${versionId}/`, headers: alice.headers })
    assert.equal(deleted.statusCode, 204, deleted.body)
    assert.deepEqual(await lookups(original), Array(6).fill('none'), 'never the copy')
  })

  test('a deleted pack\'s archives are held for 30 days for its owner, then free', async () => {
    const archive = await datapack(48)
    await publishPack(site, bob, { title: 'Held', version_name: '1.0' }, { archive })
    const gone = await site.app.inject({ method: 'DELETE', url: '/api/packs/bob/held/', headers: bob.headers })
    assert.equal(gone.statusCode, 204, gone.body)
    assert.deepEqual(await lookups(archive), Array(6).fill('none'))

    now += 29 * DAY
    expectError(await tryPublish(mallory, 'Held Copy', archive), 409, /held for that owner until/)
    const shown = await packs(['archive', 'show', sha256(archive)])
    assert.match(shown.stdout, /belongs to a deleted pack, held until/)

    now += 2 * DAY
    const taken = await tryPublish(mallory, 'Held Copy', archive)
    assert.equal(taken.statusCode, 201, `after the hold the bytes are free: ${taken.body}`)
    assert.deepEqual(await lookups(archive), Array(6).fill('mallory:held-copy'))
  })

  test('within the hold, the owner may publish the bytes again in a new pack, which then claims them', async () => {
    const archive = await datapack(48)
    await publishPack(site, bob, { title: 'Moved', version_name: '1.0' }, { archive })
    assert.equal((await site.app.inject({ method: 'DELETE', url: '/api/packs/bob/moved/', headers: bob.headers })).statusCode, 204)
    const again = await tryPublish(bob, 'Moved Here', archive)
    assert.equal(again.statusCode, 201, again.body)
    assert.deepEqual(await lookups(archive), Array(6).fill('bob:moved-here'))
  })

  test('staff may give an archive to another pack from the CLI, audited; bad input is refused in one line', async () => {
    const archive = await datapack(48)
    await publishPack(site, bob, { title: 'Source', version_name: '1.0' }, { archive })
    assert.equal((await packs(['archive', 'allow', sha256(archive), 'alice'])).code, 0)
    assert.equal((await tryPublish(alice, 'Destination', archive)).statusCode, 201)
    const moved = await packs(['archive', 'transfer', sha256(archive), 'alice:destination', '--reason', 'bob handed the pack over'])
    assert.equal(moved.code, 0, moved.stderr)
    assert.deepEqual(await lookups(archive), Array(6).fill('alice:destination'))
    const audit = (await site.app.inject({ url: `/api/audit/?target=${sha256(archive)}`, headers: root.headers })).json() as { items: Array<{ action: string; details: Record<string, unknown> }> }
    assert.deepEqual(audit.items.map((e) => [e.action, e.details.from ?? null, e.details.to ?? null]),
      [['archive.transfer', 'bob:source', 'alice:destination'], ['archive.allow-copy', null, null]])

    const bad = await packs(['archive', 'allow', 'xyz', 'alice'])
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /64 hex digits/)
    const nobody = await packs(['archive', 'allow', sha256(archive), 'nobody'])
    assert.equal(nobody.code, 1)
    assert.match(nobody.stderr, /no user "nobody"/)
  })

  test('an archive whose SHA-1 collides with another published archive\'s is refused, so a SHA-1 lookup names one archive', async () => {
    const first = await datapack(48)
    const second = await datapack(48)
    await publishPack(site, alice, { title: 'Collided', version_name: '1.0' }, { archive: first })
    // A chosen-prefix SHA-1 collision, as made with SHAttered's technique: two archives, one SHA-1. Made here by giving
    // the stored row of the first the second's SHA-1, which is all the site can see of such a pair.
    await site.app.db.updateTable('files').set({ sha1: sha1(second) }).where('sha256', '=', sha256(first)).execute()
    expectError(await tryPublish(mallory, 'Collider', second), 409, /SHA-1 .* same as that of another published archive/)
    const found = (await hashBatch([sha1(second)])).json() as { hashes: Record<string, { pack_id: string } | null> }
    assert.equal(found.hashes[sha1(second)]?.pack_id, 'collided')
  })

  test('two owners publishing the same new bytes at once: exactly one wins, the other hears 409', async () => {
    const archive = await datapack(48)
    const [a, b] = await Promise.all([tryPublish(alice, 'Race A', archive), tryPublish(bob, 'Race B', archive)])
    assert.deepEqual([a.statusCode, b.statusCode].sort(), [201, 409], `${a.body} ${b.body}`)
  })
})
