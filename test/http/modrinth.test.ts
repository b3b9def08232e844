// Existing launchers can read a Packs site: a real Modrinth
// client library from npm (@xmcl/modrinth, the X Minecraft Launcher's),
// pointed at a listening Packs server with the base URL <origin>/api/modrinth
// and a Packs API token sent Modrinth's way (`Authorization: <token>`), lists
// a pack's versions, identifies local archives by hash and finds their
// updates. No request here is written by hand except the refusals the
// library cannot make.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { ModrinthV2Client, ModerinthApiError } from '@xmcl/modrinth'
import { createApiToken } from '../../src/accounts/tokens-service.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, png, zip } from '../helpers/fixtures.js'
import { publishPack, seedTags } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let bob: TestUser
let warden: TestUser
let origin: string
let client: ModrinthV2Client
const archives = new Map<string, Buffer>()
/** Moves the site's clock (a link's expiry is checked against it). */
let clockShift = 0

const resourcePack = (pack: Record<string, unknown>, salt: string) =>
  zip({ 'pack.mcmeta': JSON.stringify({ pack: { description: salt, ...pack } }), [`assets/x/${salt}.txt`]: salt })
const sha1 = (data: Buffer) => createHash('sha1').update(data).digest('hex')
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex')
const clientWith = (headers: Record<string, string>) => new ModrinthV2Client({ baseUrl: `${origin}/api/modrinth`, headers })

async function addVersion(user: TestUser, packPath: string, name: string, archive: Buffer): Promise<void> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'changelog', value: `changes in ${name}` }, { name: 'file', value: archive, filename: `${name}.zip`, contentType: 'application/zip' }])
  const res = await site.app.inject({ method: 'POST', url: `/api/packs/${packPath}/versions/`, headers: { ...user.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
  archives.set(`${packPath}@${name}`, archive)
}

/** The failure of a client call: its HTTP status. */
async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call
  } catch (error) {
    assert.ok(error instanceof ModerinthApiError, String(error))
    return error.status
  }
  assert.fail('the call succeeded')
}

before(async () => {
  ;({ site, alice, bob, warden } = await siteWith({ users: ['alice', 'bob'], staff: ['warden'], clock: () => Date.now() + clockShift }))
  await seedTags(site)
  // alice:lamps, a resource pack: 1.20.1 (format 15), then 1.21 – 1.21.4 (34 – 46), then 1.21.9+ (69 – 75).
  const first = await resourcePack({ pack_format: 15 }, 'lamps-1')
  await publishPack(site, alice, { title: 'Lamps', summary: 'Warm light', version_name: 'for-1.20', tags: ['Medieval'] }, { archive: first, thumbnail: true })
  archives.set('alice/lamps@for-1.20', first)
  await addVersion(alice, 'alice/lamps', 'for-1.21', await resourcePack({ pack_format: 34, supported_formats: [34, 46] }, 'lamps-2'))
  await addVersion(alice, 'alice/lamps', 'for-1.21.9', await resourcePack({ min_format: 69, max_format: [75, 0] }, 'lamps-3'))
  // bob:caves, a data pack (format 48: 1.21).
  const caves = await datapack(48, { 'data/caves/x.json': '{}' })
  await publishPack(site, bob, { title: 'Caves', version_name: '1.0' }, { archive: caves })
  archives.set('bob/caves@1.0', caves)
  // Hidden by staff: nobody but bob and staff may see it.
  const secret = await resourcePack({ pack_format: 46 }, 'secret-1')
  await publishPack(site, bob, { title: 'Secret', version_name: '1.0' }, { archive: secret })
  archives.set('bob/secret@1.0', secret)
  const hide = await site.app.inject({ method: 'POST', url: '/api/packs/bob/secret/hide/', headers: warden.headers, payload: {} })
  assert.equal(hide.statusCode, 200, hide.body)
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  const address = site.app.server.address()
  assert.ok(address && typeof address === 'object')
  origin = `http://127.0.0.1:${address.port}`
  // Modrinth's way: the token alone in Authorization.
  client = clientWith({ Authorization: alice.token })
})
after(() => site.close())

describe('a Modrinth client pointed at Packs', () => {
  test('getProject by slug and by id, getProjects: the pack in Modrinth\'s shape', async () => {
    const project = await client.getProject('alice:lamps')
    assert.match(project.id, /^[0-9A-Za-z]{8}$/, 'an id of Modrinth\'s shape')
    assert.equal(project.slug, 'alice:lamps')
    assert.equal(project.title, 'Lamps')
    assert.equal(project.description, 'Warm light')
    assert.equal(project.project_type, 'resourcepack')
    assert.deepEqual(project.loaders, ['minecraft'])
    assert.ok(project.game_versions.includes('1.20.1') && project.game_versions.includes('1.21.4'), project.game_versions.join())
    assert.ok(project.categories.includes('Medieval'))
    assert.equal(project.versions.length, 3)
    assert.ok(project.icon_url?.startsWith(`${origin}/api/modrinth/files/`), 'an absolute icon URL')
    // A launcher shows it with its own HTTP client, with no credentials: the link carries its signature.
    const icon = await fetch(project.icon_url!)
    assert.equal(icon.status, 200)
    assert.deepEqual(Buffer.from(await icon.arrayBuffer()), png())
    assert.deepEqual(await client.getProject(project.id), project, 'the same by id')
    assert.deepEqual(await client.getProject('ALICE:Lamps'), project, 'the slug in any case')
    const caves = await client.getProject('bob:caves')
    assert.equal(caves.project_type, 'datapack')
    assert.deepEqual(caves.loaders, ['datapack'])
    const both = await client.getProjects([caves.id, 'alice:lamps', 'nobody:here', 'ZZZZZZZZ'])
    assert.deepEqual(both.map((p) => p.slug), ['bob:caves', 'alice:lamps'], 'in the order asked; unknown ones left out')
  })

  test('getProjectVersions: newest first, with files, hashes and game versions; filtered by game version and loader', async () => {
    const versions = await client.getProjectVersions('alice:lamps')
    assert.deepEqual(versions.map((v) => v.version_number), ['for-1.21.9', 'for-1.21', 'for-1.20'])
    const [newest] = versions
    const archive = archives.get('alice/lamps@for-1.21.9')!
    assert.equal(newest!.files.length, 1)
    const file = newest!.files[0]!
    assert.deepEqual(file.hashes, { sha1: sha1(archive), sha256: sha256(archive) })
    assert.equal(file.size, archive.length)
    assert.equal(file.filename, 'for-1.21.9.zip')
    assert.equal(file.primary, true)
    assert.equal(newest!.changelog, 'changes in for-1.21.9')
    assert.ok(newest!.game_versions.includes('1.21.9'))
    assert.deepEqual(newest!.loaders, ['minecraft'])
    // A launcher's downloader sends no credentials: the signed link alone gets the archive, byte for byte.
    const download = await fetch(file.url)
    assert.equal(download.status, 200)
    assert.match(String(download.headers.get('content-disposition')), /^attachment/)
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), archive)

    const for1214 = await client.getProjectVersions('alice:lamps', { gameVersions: ['1.21.4'], loaders: ['minecraft'] })
    assert.deepEqual(for1214.map((v) => v.version_number), ['for-1.21'])
    assert.deepEqual(await client.getProjectVersions('alice:lamps', { loaders: ['datapack'] }), [], 'not a data pack')
    assert.deepEqual(await client.getProjectVersions('alice:lamps', { featured: true }), [], 'no version is featured')

    // Versions by id, singly and in a list (the library sends only ids of Modrinth's shape).
    assert.deepEqual(await client.getProjectVersion(newest!.id), newest)
    const listed = await client.getProjectVersionsById([versions[2]!.id, newest!.id])
    assert.deepEqual(listed.map((v) => v.version_number), ['for-1.20', 'for-1.21.9'])
  })

  test('identify local archives by SHA-1 (the default) or SHA-256, singly and in a batch', async () => {
    const old = archives.get('alice/lamps@for-1.20')!
    const cave = archives.get('bob/caves@1.0')!
    const one = await client.getProjectVersionByHash(sha1(old))
    assert.equal(one.version_number, 'for-1.20')
    assert.equal(one.project_id, (await client.getProject('alice:lamps')).id)
    assert.equal((await client.getProjectVersionByHash(sha256(old).toUpperCase(), { algorithm: 'sha256' })).id, one.id, 'SHA-256, any case')
    const many = await client.getProjectVersionsByHash([sha1(old), sha1(cave), 'f'.repeat(40)])
    assert.deepEqual(Object.keys(many).sort(), [sha1(old), sha1(cave)].sort(), 'an unknown archive is left out')
    assert.equal(many[sha1(cave)]!.version_number, '1.0')
    assert.equal(await statusOf(client.getProjectVersionByHash('0'.repeat(40))), 404)
    assert.equal(await statusOf(client.getProjectVersionByHash(sha1(old), { algorithm: 'sha512' })), 400, 'no SHA-512 is kept: said, not a miss')
  })

  test('find the update of local archives for the player\'s game, singly and in a batch', async () => {
    const old = archives.get('alice/lamps@for-1.20')!
    const cave = archives.get('bob/caves@1.0')!
    const newest = await client.getLatestProjectVersion(sha1(old))
    assert.equal(newest.version_number, 'for-1.21.9')
    const for1214 = await client.getLatestProjectVersion(sha1(old), { gameVersions: ['1.21.4'], loaders: ['minecraft'] })
    assert.equal(for1214.version_number, 'for-1.21')
    const updates = await client.getLatestVersionsFromHashes([sha1(old), sha1(cave)], { algorithm: 'sha1', gameVersions: ['1.21.4'] })
    assert.equal(updates[sha1(old)]!.version_number, 'for-1.21')
    assert.equal(updates[sha1(cave)], undefined, 'caves has nothing for 1.21.4')
    const forCaves = await client.getLatestVersionsFromHashes([sha1(cave)], { gameVersions: ['1.21'], loaders: ['datapack'] })
    assert.equal(forCaves[sha1(cave)]!.version_number, '1.0')
    assert.equal(await statusOf(client.getLatestProjectVersion(sha1(old), { gameVersions: ['1.8'] })), 404)
  })

  test('a yanked version is listed as archived and is never the update', async () => {
    const versions = await client.getProjectVersions('alice:lamps')
    const newest = versions[0]!
    const packVersions = (await site.app.inject({ url: '/api/packs/alice/lamps/', headers: alice.headers })).json() as { versions: Array<{ id: string; name: string }> }
    const uuid = packVersions.versions.find((v) => v.name === newest.version_number)!.id
    const yank = (yanked: boolean) => site.app.inject({ method: 'PATCH', url: `/api/packs/alice/lamps/versions/${uuid}/`, headers: alice.headers, payload: { yanked } })
    assert.equal((await yank(true)).statusCode, 200)
    try {
      assert.equal(((await client.getProjectVersion(newest.id)) as typeof newest & { status: string }).status, 'archived')
      assert.equal((await client.getLatestProjectVersion(sha1(archives.get('alice/lamps@for-1.20')!))).version_number, 'for-1.21')
      assert.equal((await client.getProjectVersionByHash(newest.files[0]!.hashes.sha1!)).id, newest.id, 'the archive is still named')
    } finally {
      assert.equal((await yank(false)).statusCode, 200)
    }
  })

  test('a hidden pack is seen by its owner and staff only', async () => {
    assert.equal(await statusOf(client.getProject('bob:secret')), 404)
    assert.equal(await statusOf(client.getProjectVersionByHash(sha1(archives.get('bob/secret@1.0')!))), 404)
    assert.equal((await clientWith({ Authorization: bob.token }).getProject('bob:secret')).title, 'Secret')
    assert.equal((await clientWith({ Authorization: warden.token }).getProject('bob:secret')).title, 'Secret')
  })
})

describe('access on the Modrinth paths', () => {
  test('the token Modrinth\'s way or Packs\' way, or the gate password, passes; nothing, or a wrong token, is 401', async () => {
    assert.equal((await clientWith({ Authorization: `Bearer alice ${alice.token}` }).getProject('alice:lamps')).slug, 'alice:lamps')
    assert.equal((await clientWith(site.gate).getProject('alice:lamps')).slug, 'alice:lamps', 'the gate password alone')
    assert.equal(await statusOf(clientWith({}).getProject('alice:lamps')), 401)
    assert.equal(await statusOf(clientWith({ Authorization: `${alice.token}x` }).getProject('alice:lamps')), 401)
    assert.equal(await statusOf(clientWith({ Authorization: 'not a token' }).getProject('alice:lamps')), 401)
    const refused = await fetch(`${origin}/api/modrinth/v2/project/alice:lamps`)
    assert.equal(refused.status, 401)
    assert.match(((await refused.json()) as { detail: string }).detail, /master password/)
  })

  test('the bare token is only for these paths: elsewhere the API still wants "Bearer <username> <token>"', async () => {
    const res = await site.app.inject({ url: '/api/packs/alice/lamps/', headers: { authorization: alice.token } })
    assert.equal(res.statusCode, 401)
    assert.match((res.json() as { detail: string }).detail, /malformed Authorization header/)
  })

  test('a read-only token may send the lookups Modrinth makes by POST; a revoked one may not', async () => {
    const { token, id } = await createApiToken(site.app.db, 'alice', 'launcher', null, { scope: 'read' })
    const reader = clientWith({ Authorization: token })
    const old = archives.get('alice/lamps@for-1.20')!
    assert.equal((await reader.getLatestVersionsFromHashes([sha1(old)]))[sha1(old)]!.version_number, 'for-1.21.9')
    assert.equal(Object.keys(await reader.getProjectVersionsByHash([sha1(old)])).length, 1)
    const revoke = await site.app.inject({ method: 'DELETE', url: `/api/tokens/${id}/`, headers: alice.headers })
    assert.equal(revoke.statusCode, 200, revoke.body)
    assert.equal(await statusOf(reader.getProjectVersionsByHash([sha1(old)])), 401)
  })

  test('malformed lists and hashes are 400 with a detail, never 500', async () => {
    for (const path of ['/projects?ids=nope', '/projects?ids=%7B%7D', '/versions?ids=[1,2]', `/projects?ids=${encodeURIComponent(JSON.stringify(Array.from({ length: 201 }, (_, i) => `p${i}`)))}`,
      '/project/alice:lamps/version?loaders=x', '/version_file/xyz', `/version_file/${'g'.repeat(40)}`]) {
      const res = await site.app.inject({ url: `/api/modrinth/v2${path}`, headers: site.gate })
      assert.equal(res.statusCode, 400, `${path}: ${res.body}`)
      assert.equal(typeof (res.json() as { detail: unknown }).detail, 'string')
    }
    const tooMany = await site.app.inject({ method: 'POST', url: '/api/modrinth/v2/version_files', headers: site.gate, payload: { hashes: Array.from({ length: 201 }, () => 'a'.repeat(40)) } })
    assert.equal(tooMany.statusCode, 400)
  })

  test('a file link works without credentials only as signed and until it expires', async () => {
    const [newest] = await client.getProjectVersions('alice:lamps')
    const url = new URL(newest!.files[0]!.url)
    const expires = Number(url.searchParams.get('expires'))
    assert.ok(expires * 1000 > Date.now() + 6 * 24 * 3600 * 1000, 'about a week ahead')
    assert.equal((await fetch(url, { method: 'HEAD' })).status, 200)
    const forged = new URL(url)
    forged.searchParams.set('signature', `${url.searchParams.get('signature')!.slice(0, -1)}x`)
    const refused = await fetch(forged)
    assert.equal(refused.status, 403)
    assert.match(((await refused.json()) as { detail: string }).detail, /expired or not one this site made/)
    // The same signature for another file, or a later expiry, is no proof.
    const other = new URL(url)
    other.searchParams.set('expires', String(expires + 3600))
    assert.equal((await fetch(other)).status, 403)
    const files = (await client.getProjectVersions('bob:caves'))[0]!.files[0]!
    const swapped = new URL(url)
    swapped.pathname = new URL(files.url).pathname
    assert.equal((await fetch(swapped)).status, 403)
    // Expired: the genuine link, a week and a day later on the site's clock.
    clockShift = 8 * 24 * 3600 * 1000
    try {
      assert.equal((await fetch(url)).status, 403)
    } finally {
      clockShift = 0
    }
    assert.equal((await fetch(url)).status, 200)
  })
})
