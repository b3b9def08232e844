// Text a client prints holds no control character (src/http/text-input.ts):
// one-line text (titles, summaries, version names, tags, token names, search
// terms) refuses C0, DEL, C1 and the bidirectional controls with a 400 naming
// the field, through JSON, forms and multipart alike; the Markdown fields
// (description, changelog) may also hold line breaks and tabs, nothing else.
// A draft's data is stored as given, and checked when it is published.
// Passwords are compared, not printed: they keep any character but NUL.
// Text stored before these rules is still served as it is.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, saveDraft, upload, type PackJson } from '../helpers/packs.js'

const ESC = '\u001b[31m'

let site: TestSite
let alice: TestUser
let pack: PackJson
before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'] }))
  pack = await publishPack(site, alice, { title: 'Plain Pack', version_name: '1.0.0' })
})
after(() => site.close())

const packUrl = () => `/api/packs/${pack.namespace}/${pack.pack_id}/`

async function current(): Promise<PackJson> {
  const res = await site.app.inject({ url: packUrl(), headers: alice.headers })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as PackJson
}

function edit(fields: Record<string, unknown>) {
  return current().then((now) => site.app.inject({ method: 'PATCH', url: packUrl(), headers: alice.headers, payload: { revision: now.revision, ...fields } }))
}

async function newVersion(fields: Record<string, string>) {
  const body = multipart([
    ...Object.entries(fields).map(([name, value]) => ({ name, value })),
    { name: 'file', value: await datapack(48), filename: 'v.zip', contentType: 'application/zip' },
  ])
  return site.app.inject({ method: 'POST', url: `${packUrl()}versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload })
}

describe('one-line text', () => {
  test('JSON (pack edit): ESC, a line break, C1, DEL or a bidirectional control in the title, summary or a tag is 400 naming the field', async () => {
    expectError(await edit({ title: `Red ${ESC}Pack` }), 400, /"title" contains a control character \(U\+001B\)/)
    expectError(await edit({ title: 'Two\nLines' }), 400, /"title" contains a line break \(U\+000A\)/)
    expectError(await edit({ title: 'Tab\there' }), 400, /"title" contains a tab \(U\+0009\)/)
    expectError(await edit({ summary: 'next line\u0085here' }), 400, /"summary" contains a control character \(U\+0085\)/)
    expectError(await edit({ summary: 'del\u007f' }), 400, /"summary" contains a control character \(U\+007F\)/)
    expectError(await edit({ title: 'evil\u202egpj.exe' }), 400, /"title" contains a bidirectional control character \(U\+202E\)/)
    for (const bidi of ['\u061c', '\u200e', '\u200f', '\u202a', '\u2066', '\u2069']) {
      expectError(await edit({ title: `a${bidi}b` }), 400, /"title" contains a bidirectional control character/)
    }
    expectError(await edit({ tags: ['ok', `bad${ESC}`] }), 400, /"tags\[1\]" contains a control character \(U\+001B\)/)
    assert.equal((await current()).title, 'Plain Pack', 'nothing changed')
    // Letters of every script, and the characters next to the refused ranges, are text.
    const fine = await edit({ title: 'Ümläut 日本 עברית \u00a0\u200d\u2070 ~', summary: 'a\u00a0b' })
    assert.equal(fine.statusCode, 200, fine.body)
  })

  test('multipart (new version): a version name with ESC is 400 naming the field; nothing is stored', async () => {
    expectError(await newVersion({ version_name: `2.0${ESC}` }), 400, /"version_name" field contains a control character \(U\+001B\)/)
    expectError(await newVersion({ version_name: '2.0\r\n' }), 400, /"version_name" field contains a line break \(U\+000D\)/)
    assert.deepEqual((await current()).versions.map((v) => v.name), ['1.0.0'])
  })

  test('a token name, a search term, a form field name: the same rule', async () => {
    expectError(await site.app.inject({ method: 'POST', url: '/api/tokens/', headers: alice.headers, payload: { name: `ci${ESC}` } }), 400, /"name" contains a control character/)
    expectError(await site.app.inject({ url: `/api/packs/?q=${encodeURIComponent(`pla${ESC}`)}`, headers: site.gate }), 400, /query parameter "q" contains a control character/)
    const body = multipart([{ name: `version${ESC}`, value: 'x' }])
    expectError(await site.app.inject({ method: 'POST', url: `${packUrl()}versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload }), 400, /multipart field name contains a control character/)
    // The sign-in form: the username is one line; the password is compared, not printed, so a tab in it is no 400 (wrong: 401).
    const login = (username: string, password: string) =>
      site.app.inject({ method: 'POST', url: '/login/', headers: { ...site.gate, accept: 'application/json' }, payload: { username, password } })
    expectError(await login(`alice${ESC}`, 'alice-password'), 400, /"username" contains a control character/)
    expectError(await login('alice', 'wrong\tpassword'), 401)
  })

  test('a file name is the uploader\'s own: its control characters, the Arabic letter mark included, are removed (not refused)', async () => {
    const uploaded = await upload(site, alice, 'version', await datapack(48), { filename: 'evil\u061c\u202egpj\u001b.zip' })
    assert.equal(uploaded.filename, 'evilgpj.zip')
  })
})

describe('multi-line text (Markdown)', () => {
  test('a changelog with line breaks and tabs is kept as sent; with ESC it is 400', async () => {
    const changelog = '# Changes\n\n- one\r\n\t- nested\n'
    const res = await newVersion({ version_name: '2.0.0', changelog })
    assert.equal(res.statusCode, 201, res.body)
    const version = (res.json() as PackJson).versions.find((v) => v.name === '2.0.0')!
    assert.equal(version.changelog, changelog)
    expectError(await newVersion({ version_name: '2.0.1', changelog: `red ${ESC}text` }), 400, /"changelog" field contains a control character \(U\+001B\)/)
    const patch = (payload: Record<string, unknown>) =>
      site.app.inject({ method: 'PATCH', url: `${packUrl()}versions/${version.id}/`, headers: alice.headers, payload })
    assert.equal((await patch({ changelog: 'fixed\n\tindented' })).statusCode, 200)
    expectError(await patch({ changelog: `bad\n${ESC}` }), 400, /"changelog" contains a control character \(U\+001B\)/)
    expectError(await patch({ changelog: 'form\ffeed' }), 400, /"changelog" contains a control character \(U\+000C\)/)
  })

  test('a description may span lines, but holds no ESC or bidirectional control', async () => {
    assert.equal((await edit({ description: 'Line one\r\n\r\n\tcode' })).statusCode, 200)
    expectError(await edit({ description: `colour ${ESC}` }), 400, /"description" contains a control character \(U\+001B\)/)
    expectError(await edit({ description: 'a\u202eb' }), 400, /"description" contains a bidirectional control character \(U\+202E\)/)
  })
})

describe('drafts', () => {
  test('a draft keeps what it was given; publishing it with ESC in the title is 400 naming the title; once fixed it publishes', async () => {
    const draft = randomUUID()
    const data = { title: `Red ${ESC}Pack`, version_name: '1.0', description: 'ok\n', revision: 3, note: `kept${ESC}` }
    await saveDraft(site, alice, draft, data)
    const saved = await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: alice.headers })
    assert.equal(saved.statusCode, 200, saved.body)
    assert.deepEqual((saved.json() as { data: unknown }).data, data, 'stored and returned as given')
    await upload(site, alice, 'version', await datapack(48), { draft })
    const publish = () => site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: alice.headers, payload: { draft } })
    expectError(await publish(), 400, /cannot publish the draft: its title contains a control character \(U\+001B\)/)
    await saveDraft(site, alice, draft, { ...data, title: 'Red Pack', changelog: `x${ESC}` })
    expectError(await publish(), 400, /its changelog contains a control character/)
    await saveDraft(site, alice, draft, { ...data, title: 'Red Pack', version_name: '1.0\u202e' })
    expectError(await publish(), 400, /its version_name contains a bidirectional control character/)
    await saveDraft(site, alice, draft, { ...data, title: 'Red Pack', changelog: 'first\n\tversion' })
    const published = await publish()
    assert.equal(published.statusCode, 201, published.body)
    assert.equal((published.json() as PackJson).title, 'Red Pack')
  })
})

describe('text stored before the rules', () => {
  test('is still served: the pack, the listing and the update-check answer with it as it is; sending it back is refused', async () => {
    const old = await publishPack(site, alice, { title: 'Old Pack', version_name: '0.9' })
    await site.app.db.updateTable('packs').set({ title: `Old ${ESC}Pack`, summary: 'bidi\u202e' }).where('namespace', '=', old.namespace).where('pack_id', '=', old.pack_id).execute()
    await site.app.db.updateTable('versions').set({ name: `0.9${ESC}` }).where('name', '=', '0.9').execute()
    const res = await site.app.inject({ url: `/api/packs/${old.namespace}/${old.pack_id}/`, headers: site.gate })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json() as PackJson
    assert.equal(body.title, `Old ${ESC}Pack`)
    assert.equal(body.summary, 'bidi\u202e')
    assert.equal(body.versions[0]!.name, `0.9${ESC}`)
    const listed = await site.app.inject({ url: '/api/packs/?sort=created', headers: site.gate })
    assert.equal(listed.statusCode, 200, listed.body)
    const latest = await site.app.inject({ url: `/api/packs/${old.namespace}/${old.pack_id}/latest`, headers: site.gate })
    assert.equal(latest.statusCode, 200, latest.body)
    assert.equal((latest.json() as { version: string }).version, `0.9${ESC}`)
    // Sending the old title back is refused like any new one: the owner removes what the rules refuse. Leaving it alone is fine.
    expectError(await site.app.inject({ method: 'PATCH', url: `/api/packs/${old.namespace}/${old.pack_id}/`, headers: alice.headers, payload: { revision: body.revision, title: body.title } }), 400, /"title" contains a control character/)
    const edited = await site.app.inject({ method: 'PATCH', url: `/api/packs/${old.namespace}/${old.pack_id}/`, headers: alice.headers, payload: { revision: body.revision, description: 'new\n' } })
    assert.equal(edited.statusCode, 200, edited.body)
  })
})
