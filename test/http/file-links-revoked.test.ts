// The signed file links of the Modrinth-compatible API (src/modrinth/file-links.ts)
// open a file without the gate only while the pack is one everyone may see and
// the gate password is the one they were made under: hiding the pack (staff)
// or disabling its owner makes them 404 until that is undone; changing the
// password with `packs master-password set` makes them 403, like an expired
// link, and the API hands out fresh ones that work.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { runCli } from '../helpers/server.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let warden: TestUser
let pack: PackJson

interface Links {
  archive: string
  icon: string
}

/** Fresh links, as a launcher gets them: the version's file and the project's icon, asked with alice's token. */
async function links(): Promise<Links> {
  const ref = `${pack.namespace}:${pack.pack_id}`
  const versions = await site.app.inject({ url: `/api/modrinth/v2/project/${ref}/version`, headers: { authorization: alice.token } })
  assert.equal(versions.statusCode, 200, versions.body)
  const project = await site.app.inject({ url: `/api/modrinth/v2/project/${ref}`, headers: { authorization: alice.token } })
  assert.equal(project.statusCode, 200, project.body)
  const icon = (project.json() as { icon_url: string | null }).icon_url
  assert.ok(icon)
  return { archive: (versions.json() as Array<{ files: Array<{ url: string }> }>)[0]!.files[0]!.url, icon }
}

/** A link fetched as a launcher's downloader fetches it: no gate password, no token. */
function open(url: string, method: 'GET' | 'HEAD' = 'GET') {
  return site.app.inject({ method, url: pathOf(url) })
}

async function opens(all: Links): Promise<void> {
  for (const url of [all.archive, all.icon]) {
    const res = await open(url)
    assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`)
    assert.equal((await open(url, 'HEAD')).statusCode, 200)
  }
}

async function notFound(all: Links): Promise<void> {
  for (const url of [all.archive, all.icon]) {
    expectError(await open(url), 404, /file not found/)
    assert.equal((await open(url, 'HEAD')).statusCode, 404)
  }
}

async function staff(path: string): Promise<void> {
  const res = await site.app.inject({ method: 'POST', url: path, headers: warden.headers, payload: {} })
  assert.equal(res.statusCode, 200, res.body)
}

before(async () => {
  // The gate password lives hashed in the database (no PACKS_MASTER_PASSWORD), so `packs master-password set` changes it.
  ;({ site, alice, warden } = await siteWith({ users: ['alice'], staff: ['warden'], env: { PACKS_MASTER_PASSWORD: '' } }))
  pack = await publishPack(site, alice, { title: 'Linked Pack' }, { thumbnail: true })
})
after(() => site.close())

describe('a signed file link', () => {
  test('works while the pack is visible; 404 while staff hide it; works again once it is unhidden', async () => {
    const given = await links()
    await opens(given)
    await staff(`/api/packs/${pack.namespace}/${pack.pack_id}/hide/`)
    await notFound(given)
    await staff(`/api/packs/${pack.namespace}/${pack.pack_id}/unhide/`)
    await opens(given)
  })

  test('404 while the owner is disabled; works again once the account is enabled', async () => {
    const given = await links()
    await staff(`/api/users/${alice.username}/disable/`)
    await notFound(given)
    await staff(`/api/users/${alice.username}/enable/`)
    await opens(given)
  })

  test('a link made before `packs master-password set` is refused (403); a fresh one works', async () => {
    const old = await links()
    await opens(old)
    const run = await runCli(['master-password', 'set', 'a-new-site-password'], undefined, {
      PACKS_DATA_DIR: site.dataDir, DATABASE_URL: site.config.databaseUrl, PACKS_MASTER_PASSWORD: undefined,
    })
    assert.equal(run.code, 0, run.stderr)
    // A running server reads the stored password again within a few seconds (the CLI says so); wait for this one to.
    const deadline = Date.now() + 30_000
    let res = await open(old.archive)
    while (res.statusCode === 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      res = await open(old.archive)
    }
    expectError(res, 403, /site password changed/)
    expectError(await open(old.icon), 403, /ask the API again for a fresh one/)
    assert.equal((await site.app.inject({ url: '/api/users/autocomplete/', headers: { 'x-master-password': 'a-new-site-password' } })).statusCode, 200)

    const fresh = await links()
    assert.notEqual(fresh.archive, old.archive)
    await opens(fresh)
    expectError(await open(old.archive), 403)
  })
})
