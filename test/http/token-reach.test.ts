// Tokens with a reach: read-only tokens, and tokens that
// may only publish new versions of chosen packs of their owner, with an
// expiry. A request beyond the reach is 403 with a detail naming what the
// token may do; sessions and old (full) tokens are unaffected. Also: creating
// them (API, settings page without JavaScript, `packs token create`), the
// list showing each token's reach, and the 400s of bad creation bodies.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { ApiTokenBody, CreatedTokenBody } from '../../src/api/tokens.js'
import { TOKEN_MAX_PACKS } from '../../src/api/constants.js'
import { cliEnvOf, expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'
import { runCli, type CliResult } from '../helpers/server.js'

type Headers = Record<string, string>

let site: TestSite
let alice: TestUser
let bob: TestUser
let dora: TestUser
let root: TestUser
let castle: PackJson
let tower: PackJson
let moat: PackJson
let bobs: PackJson
let versionCounter = 0

before(async () => {
  ;({ site, alice, bob, dora, root } = await siteWith({ users: ['alice', 'bob', 'dora'], staff: ['root'] }))
  castle = await publishPack(site, alice, { title: 'Castle' })
  tower = await publishPack(site, alice, { title: 'Tower' })
  moat = await publishPack(site, alice, { title: 'Moat' })
  bobs = await publishPack(site, bob, { title: 'Bob Pack' })
})
after(() => site.close())

interface Session { cookie: string; csrf: string }
const sessions = new Map<string, Session>()

/** The user's browser session (signed in once per user): tokens are made only from one. */
async function sessionOf(user: TestUser): Promise<Session> {
  const known = sessions.get(user.username)
  if (known) return known
  const res = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
  assert.equal(res.statusCode, 200, res.body)
  const session = { cookie: `packs_session=${res.cookies.find((c) => c.name === 'packs_session')!.value}`, csrf: (res.json() as { csrf_token: string }).csrf_token }
  sessions.set(user.username, session)
  return session
}

async function createAs(user: TestUser, body: Record<string, unknown>) {
  const { cookie, csrf } = await sessionOf(user)
  return site.app.inject({ method: 'POST', url: '/api/tokens/', headers: { cookie, 'x-csrf-token': csrf }, payload: body })
}

async function token(user: TestUser, body: Record<string, unknown>): Promise<CreatedTokenBody & { headers: Headers }> {
  const res = await createAs(user, { name: 'reach', ...body })
  assert.equal(res.statusCode, 201, res.body)
  const created = res.json() as CreatedTokenBody
  return { ...created, headers: { authorization: created.authorization } }
}

async function listOf(user: TestUser): Promise<ApiTokenBody[]> {
  const { cookie } = await sessionOf(user)
  const res = await site.app.inject({ url: '/api/tokens/', headers: { cookie } })
  assert.equal(res.statusCode, 200, res.body)
  return res.json() as ApiTokenBody[]
}

/** POST /api/packs/{namespace}/{pack_id}/versions/ with a fresh version name. */
async function newVersion(namespace: string, packId: string, headers: Headers) {
  const body = multipart([
    { name: 'version_name', value: `2.0.${++versionCounter}` },
    { name: 'file', value: await datapack(48), filename: 'pack.zip', contentType: 'application/zip' },
  ])
  return site.app.inject({ method: 'POST', url: `/api/packs/${namespace}/${packId}/versions/`, headers: { ...headers, ...body.headers }, payload: body.payload })
}

async function uploadWith(headers: Headers) {
  const body = multipart([{ name: 'kind', value: 'version' }, { name: 'file', value: await datapack(48), filename: 'pack.zip' }])
  return site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...headers, ...body.headers }, payload: body.payload })
}

const saveDraftWith = (headers: Headers) =>
  site.app.inject({ method: 'POST', url: '/api/draft/', headers, payload: { draft: '6f1c2d3e-4a5b-4c6d-8e7f-001122334455', data: { title: 'Sneaky' } } })
const publishDraftWith = (headers: Headers) =>
  site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers, payload: { draft: '6f1c2d3e-4a5b-4c6d-8e7f-001122334455' } })

async function versionCount(pack: PackJson): Promise<number> {
  const res = await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: alice.headers })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as PackJson).versions.length
}

describe('a read-only token', () => {
  test('reads everything its owner may read', async () => {
    const read = await token(alice, { scope: 'read' })
    assert.equal(read.scope, 'read')
    assert.deepEqual(read.packs, [])
    for (const url of ['/api/me/', '/api/packs/', `/api/packs/alice/castle/`, '/api/tokens/', '/api/drafts/', '/api/packs/alice/castle/latest']) {
      const res = await site.app.inject({ url, headers: read.headers })
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
    }
    assert.equal((await site.app.inject({ method: 'HEAD', url: '/api/packs/', headers: read.headers })).statusCode, 200)
    // A staff member's read-only token reads what staff read.
    const staffRead = await token(root, { scope: 'read' })
    assert.equal((await site.app.inject({ url: '/api/stats/', headers: staffRead.headers })).statusCode, 200)
  })

  test('changes nothing: uploads, drafts, publishing, new versions and revoking are 403 saying it may only read', async () => {
    const read = await token(alice, { scope: 'read' })
    const before = await versionCount(castle)
    const refusals = [
      await uploadWith(read.headers),
      await saveDraftWith(read.headers),
      await publishDraftWith(read.headers),
      await newVersion('alice', 'castle', read.headers),
      await site.app.inject({ method: 'DELETE', url: `/api/tokens/${read.id}/`, headers: read.headers }),
      await site.app.inject({ method: 'DELETE', url: '/api/draft/', headers: read.headers, payload: { draft: '6f1c2d3e-4a5b-4c6d-8e7f-001122334455' } }),
    ]
    for (const res of refusals) expectError(res, 403, /^this token is read-only: it may only read \(GET, HEAD and OPTIONS requests\)/)
    assert.equal(await versionCount(castle), before, 'no version was added')
    assert.ok((await listOf(alice)).some((t) => t.id === read.id), 'the token revoked nothing, itself included')
    const drafts = await site.app.inject({ url: '/api/drafts/', headers: alice.headers })
    assert.ok(!drafts.body.includes('Sneaky'), 'no draft was saved')
    // The same account's session and full token still do all of it.
    assert.equal((await newVersion('alice', 'castle', alice.headers)).statusCode, 201)
    assert.equal((await uploadWith(alice.headers)).statusCode, 200)
  })
})

describe('a publish token', () => {
  let publish: CreatedTokenBody & { headers: Headers }
  before(async () => {
    publish = await token(alice, { name: 'ci', scope: 'publish', packs: ['alice:castle', 'Tower'], expires_in_days: 30 })
  })

  test('is created with its packs, in name order, and reads like any token', async () => {
    assert.equal(publish.scope, 'publish')
    assert.deepEqual(publish.packs, ['alice:castle', 'alice:tower'])
    assert.ok(publish.expires_at, 'it has its expiry')
    assert.equal((await site.app.inject({ url: '/api/packs/bob/bob-pack/', headers: publish.headers })).statusCode, 200)
    assert.equal((await site.app.inject({ url: '/api/me/', headers: publish.headers })).statusCode, 200)
  })

  test('publishes new versions of its packs (any case in the path): 201', async () => {
    const before = await versionCount(castle)
    const res = await newVersion('alice', 'castle', publish.headers)
    assert.equal(res.statusCode, 201, res.body)
    assert.equal(await versionCount(castle), before + 1)
    assert.equal((await newVersion('ALICE', 'Tower', publish.headers)).statusCode, 201)
    // Within the reach the route's own rules still apply: a bad body is the route's 400.
    const noFile = multipart([{ name: 'version_name', value: 'no-file' }])
    expectError(await site.app.inject({
      method: 'POST', url: '/api/packs/alice/castle/versions/', headers: { ...publish.headers, ...noFile.headers }, payload: noFile.payload,
    }), 400, /file/)
  })

  test('another of the owner\'s packs, someone else\'s pack and a missing one are all 403 naming its packs', async () => {
    const named = /^this token may only publish new versions of alice:castle, alice:tower \(POST \/api\/packs\/\{namespace\}\/\{pack_id\}\/versions\/\) and read; uploads, drafts, new packs and every other change need a full-access token$/
    const before = await versionCount(moat)
    const details = [
      expectError(await newVersion('alice', 'moat', publish.headers), 403, named),
      // Someone else's pack: the same 403, decided before any lookup, so it tells nothing of bob's packs (or of any hidden one).
      expectError(await newVersion('bob', 'bob-pack', publish.headers), 403, named),
      expectError(await newVersion('bob', 'no-such-pack', publish.headers), 403, named),
    ]
    assert.equal(new Set(details).size, 1, 'an existing, someone else\'s and a missing pack get the same answer')
    assert.equal(await versionCount(moat), before)
  })

  test('uploads, drafts and publishing a new pack are beyond it: 403 saying so', async () => {
    for (const res of [await uploadWith(publish.headers), await saveDraftWith(publish.headers), await publishDraftWith(publish.headers)]) {
      expectError(res, 403, /may only publish new versions of alice:castle, alice:tower .*uploads, drafts, new packs and every other change need a full-access token/)
    }
    expectError(await site.app.inject({ method: 'DELETE', url: `/api/tokens/${publish.id}/`, headers: publish.headers }), 403)
  })

  test('the list shows every token\'s reach by the packs\' current names', async () => {
    const list = await listOf(alice)
    const listed = list.find((t) => t.id === publish.id)!
    assert.equal(listed.scope, 'publish')
    assert.deepEqual(listed.packs, ['alice:castle', 'alice:tower'])
    assert.ok(list.some((t) => t.scope === 'read' && t.packs.length === 0))
    const helperToken = list.find((t) => t.name === 'tests')!
    assert.equal(helperToken.scope, 'full')
    assert.deepEqual(helperToken.packs, [])
    // The same list through a token.
    const viaToken = (await site.app.inject({ url: '/api/tokens/', headers: publish.headers })).json() as ApiTokenBody[]
    assert.deepEqual(viaToken.find((t) => t.id === publish.id)?.packs, ['alice:castle', 'alice:tower'])
  })
})

describe('tokens and their packs over time', () => {
  test('a deleted pack leaves the token; once all its packs are gone it stays listed, reaching nothing but reading', async () => {
    const temp = await publishPack(site, alice, { title: 'Temporary' })
    const temp2 = await publishPack(site, alice, { title: 'Temporary Two' })
    const both = await token(alice, { scope: 'publish', packs: [temp.pack_id, temp2.pack_id] })
    assert.deepEqual(both.packs, ['alice:temporary', 'alice:temporary-two'])
    assert.equal((await newVersion('alice', 'temporary', both.headers)).statusCode, 201)
    // Deleting a pack (the delete service's work) removes its row; token_packs follows by ON DELETE CASCADE.
    await site.app.db.deleteFrom('packs').where('namespace', '=', 'alice').where('pack_id', '=', 'temporary').execute()
    assert.deepEqual((await listOf(alice)).find((t) => t.id === both.id)?.packs, ['alice:temporary-two'])
    expectError(await newVersion('alice', 'temporary', both.headers), 403, /may only publish new versions of alice:temporary-two /)
    await site.app.db.deleteFrom('packs').where('namespace', '=', 'alice').where('pack_id', '=', 'temporary-two').execute()
    const listed = (await listOf(alice)).find((t) => t.id === both.id)
    assert.ok(listed, 'still listed')
    assert.equal(listed.scope, 'publish')
    assert.deepEqual(listed.packs, [])
    expectError(await newVersion('alice', 'temporary-two', both.headers), 403, /could only publish new versions of packs that have all been deleted since, or whose teams its owner has left: it may now only read/)
    assert.equal((await site.app.inject({ url: '/api/me/', headers: both.headers })).statusCode, 200)
  })

  test('an expired token is 401, whatever its reach', async () => {
    for (const body of [{ scope: 'read' }, { scope: 'publish', packs: ['castle'] }, { scope: 'full' }]) {
      const created = await token(alice, { ...body, expires_in_days: 1 })
      assert.equal((await site.app.inject({ url: '/api/me/', headers: created.headers })).statusCode, 200)
      await site.app.db.updateTable('api_tokens').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', created.id).execute()
      expectError(await site.app.inject({ url: '/api/me/', headers: created.headers }), 401, /expired/)
      expectError(await newVersion('alice', 'castle', created.headers), 401)
    }
  })

  test('tokens made before reaches existed (scope defaulted by the migration) keep full access', async () => {
    // A row written as the old code wrote it: no scope given.
    const { createHash, randomUUID } = await import('node:crypto')
    const raw = `packs_legacy${randomUUID().replaceAll('-', '')}`
    const users = await site.app.db.selectFrom('users').select('id').where('username_lower', '=', 'alice').executeTakeFirstOrThrow()
    await site.app.db.insertInto('api_tokens').values({
      id: randomUUID(), user_id: users.id, name: 'legacy', token_hash: createHash('sha256').update(raw).digest('hex'),
      created_at: new Date().toISOString(), last_used_at: null, expires_at: null, revoked_at: null,
    }).execute()
    const headers = { authorization: `Bearer alice ${raw}` }
    assert.equal((await newVersion('alice', 'moat', headers)).statusCode, 201)
    assert.equal((await uploadWith(headers)).statusCode, 200)
    assert.equal((await saveDraftWith(headers)).statusCode, 200)
    assert.equal((await listOf(alice)).find((t) => t.name === 'legacy')?.scope, 'full')
    // And the helper's token (made through createApiToken without a reach) too.
    assert.equal((await newVersion('alice', 'tower', alice.headers)).statusCode, 201)
  })

  test('a disabled account\'s tokens are 401, whatever their reach; enabled again, they work within it', async () => {
    const doraPack = await publishPack(site, dora, { title: 'Dora Pack' })
    const read = await token(dora, { scope: 'read' })
    const publish = await token(dora, { scope: 'publish', packs: [`dora:${doraPack.pack_id}`] })
    await site.app.db.updateTable('users').set({ disabled_at: new Date().toISOString() }).where('username_lower', '=', 'dora').execute()
    for (const headers of [read.headers, publish.headers, dora.headers]) {
      expectError(await site.app.inject({ url: '/api/me/', headers }), 401, /disabled/)
      expectError(await newVersion('dora', doraPack.pack_id, headers), 401, /disabled/)
    }
    await site.app.db.updateTable('users').set({ disabled_at: null }).where('username_lower', '=', 'dora').execute()
    assert.equal((await newVersion('dora', doraPack.pack_id, publish.headers)).statusCode, 201)
    expectError(await newVersion('dora', doraPack.pack_id, read.headers), 403, /read-only/)
  })

  test('sessions have no reach: a session of an account with only narrow tokens does everything', async () => {
    const { cookie, csrf } = await sessionOf(alice)
    const body = multipart([
      { name: 'version_name', value: 'session-made' },
      { name: 'file', value: await datapack(48), filename: 'pack.zip' },
    ])
    const res = await site.app.inject({
      method: 'POST', url: '/api/packs/alice/moat/versions/', headers: { cookie, 'x-csrf-token': csrf, ...body.headers }, payload: body.payload,
    })
    assert.equal(res.statusCode, 201, res.body)
  })
})

describe('creating tokens with a reach', () => {
  test('bad bodies are 400 with a detail naming the problem, and make nothing', async () => {
    const countBefore = (await listOf(alice)).length
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ scope: 'write' }, /scope/],
      [{ scope: 'publish' }, /a publish token needs at least one of your packs/],
      [{ scope: 'publish', packs: [] }, /a publish token needs at least one of your packs/],
      [{ scope: 'read', packs: ['alice:castle'] }, /packs are only for a publish token \(scope "publish"\); a read token names no packs/],
      [{ packs: ['alice:castle'] }, /packs are only for a publish token .*a full token names no packs/],
      [{ scope: 'full', packs: ['castle'] }, /a full token names no packs/],
      [{ scope: 'publish', packs: ['bob:bob-pack'] }, /^not among your packs: bob:bob-pack \(a publish token may only name packs you own or are in the team of\)$/],
      [{ scope: 'publish', packs: ['alice:castle', 'alice:nope', 'bob:bob-pack'] }, /^not among your packs: alice:nope, bob:bob-pack /],
      [{ scope: 'publish', packs: ['nope'] }, /not among your packs: alice:nope/],
      [{ scope: 'publish', packs: ['alice castle'] }, /^not a pack name: "alice castle" \(expected namespace:pack_id/],
      [{ scope: 'publish', packs: ['a:b:c', ':castle', 'alice:'] }, /not a pack name: "a:b:c", ":castle", "alice:"/],
      [{ scope: 'publish', packs: ['x'.repeat(101)] }, /packs/],
      [{ scope: 'publish', packs: [''] }, /packs/],
      [{ scope: 'publish', packs: Array.from({ length: TOKEN_MAX_PACKS + 1 }, (_, i) => `p${i}`) }, /packs/],
      [{ scope: 'publish', packs: [{ id: 'castle' }] }, /packs/],
      [{ scope: 'publish', packs: ['castle'], expires_in_days: 0 }, /expires_in_days/],
    ]
    for (const [body, detail] of cases) {
      expectError(await createAs(alice, { name: 'bad', ...body }), 400, detail)
    }
    assert.equal((await listOf(alice)).length, countBefore, 'nothing was created')
  })

  test('names in any case, bare ids of the own namespace, duplicates once; hidden own packs too', async () => {
    await site.app.db.updateTable('packs').set({ hidden_at: new Date().toISOString() }).where('namespace', '=', 'alice').where('pack_id', '=', 'moat').execute()
    try {
      const created = await token(alice, { scope: 'publish', packs: [' MOAT ', 'alice:Moat', 'Alice:CASTLE', 'castle'] })
      assert.deepEqual(created.packs, ['alice:castle', 'alice:moat'])
      // The owner still releases a pack staff hid (the route decides that, and allows its owner).
      assert.equal((await newVersion('alice', 'moat', created.headers)).statusCode, 201)
    } finally {
      await site.app.db.updateTable('packs').set({ hidden_at: null }).where('namespace', '=', 'alice').where('pack_id', '=', 'moat').execute()
    }
  })

  test('staff may only name their own packs too: someone else\'s is the same 400', async () => {
    expectError(await createAs(root, { name: 'x', scope: 'publish', packs: ['alice:castle'] }), 400, /^not among your packs: alice:castle /)
    const rootPack = await publishPack(site, root, { title: 'Staff Pack' })
    const own = await token(root, { scope: 'publish', packs: [rootPack.pack_id] })
    assert.deepEqual(own.packs, ['root:staff-pack'])
    // Staff's publish token is as narrow as anyone's: not even a staff action on someone else's pack.
    expectError(await newVersion('alice', 'castle', own.headers), 403, /may only publish new versions of root:staff-pack /)
  })

  test('a token still cannot make tokens, whatever its reach', async () => {
    const full = await token(alice, { scope: 'full' })
    expectError(await site.app.inject({ method: 'POST', url: '/api/tokens/', headers: full.headers, payload: { name: 'x', scope: 'read' } }), 403, /browser session/)
    const read = await token(alice, { scope: 'read' })
    expectError(await site.app.inject({ method: 'POST', url: '/api/tokens/', headers: read.headers, payload: { name: 'x', scope: 'read' } }), 403, /read-only/)
  })

  test('the API document describes the reach on the create body and the list', async () => {
    const doc = (await site.app.inject({ url: '/api/schema/', headers: site.gate })).json() as {
      paths: Record<string, Record<string, { description?: string; responses: Record<string, unknown>; requestBody?: { content: Record<string, { schema: { properties: Record<string, { description?: string }> } }> } }>>
    }
    const post = doc.paths['/api/tokens/']!.post!
    assert.match(post.description ?? '', /publish/)
    assert.ok(post.responses['409'], 'a pack deleted meanwhile is documented')
    const props = post.requestBody!.content['application/json']!.schema.properties
    assert.match(props.scope!.description ?? '', /read: reading only/)
    assert.match(props.packs!.description ?? '', /namespace:pack_id/)
  })
})

describe('Settings → API tokens page: the reach', () => {
  const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }

  test('offers Full / Read-only / Publish versions of the user\'s own packs, and lists each token\'s access', async () => {
    await token(alice, { name: 'listed-publish', scope: 'publish', packs: ['castle', 'tower'] })
    const { cookie } = await sessionOf(alice)
    const res = await site.app.inject({ url: '/settings/tokens/', headers: { cookie, accept: 'text/html' } })
    assert.equal(res.statusCode, 200)
    assert.match(res.body, /<input type="radio" name="scope" id="scope-full" value="full" checked/)
    assert.match(res.body, /<input type="radio" name="scope" id="scope-read" value="read"/)
    assert.match(res.body, /<input type="radio" name="scope" id="scope-publish" value="publish" aria-describedby/)
    for (const name of ['alice:castle', 'alice:tower', 'alice:moat']) {
      assert.match(res.body, new RegExp(`<input type="checkbox" name="packs" id="token-pack-\\d+" value="${name}">`))
    }
    assert.ok(!res.body.includes('bob:bob-pack'), 'only the user\'s own packs are offered')
    assert.match(res.body, /<th scope="col">Access<\/th>/)
    assert.match(res.body, /<td data-label="Access" class="token-reach">Publish versions of <code>alice:castle<\/code>, <code>alice:tower<\/code><\/td>/)
    assert.match(res.body, /<td data-label="Access" class="token-reach">Read-only<\/td>/)
    assert.match(res.body, /<td data-label="Access" class="token-reach">Full access<\/td>/)
    // Someone without packs cannot choose Publish, and is told why.
    const bare = await site.user('nopacks')
    const { cookie: bareCookie } = await sessionOf(bare)
    const empty = await site.app.inject({ url: '/settings/tokens/', headers: { cookie: bareCookie, accept: 'text/html' } })
    assert.match(empty.body, /id="scope-publish" value="publish" disabled/)
    assert.match(empty.body, /You have no packs yet/)
  })

  test('without JavaScript: a publish token from the ticked boxes; boxes ticked for another choice are ignored; a refusal keeps the choice', async () => {
    const { cookie, csrf } = await sessionOf(alice)
    const post = (fields: Array<[string, string]>) => site.app.inject({
      method: 'POST', url: '/settings/tokens/', headers: { cookie, ...FORM },
      payload: new URLSearchParams([['csrf_token', csrf], ...fields]).toString(),
    })
    const made = await post([['name', 'form-publish'], ['expires_in_days', '7'], ['scope', 'publish'], ['packs', 'alice:tower']])
    assert.equal(made.statusCode, 200, made.body)
    const raw = /<code id="new-token" class="secret">(packs_[^<]+)<\/code>/.exec(made.body)?.[1]
    assert.ok(raw)
    const headers = { authorization: `Bearer alice ${raw}` }
    assert.equal((await newVersion('alice', 'tower', headers)).statusCode, 201)
    expectError(await newVersion('alice', 'castle', headers), 403, /only publish new versions of alice:tower /)
    assert.deepEqual((await listOf(alice)).find((t) => t.name === 'form-publish')?.packs, ['alice:tower'])

    const read = await post([['name', 'form-read'], ['scope', 'read'], ['packs', 'alice:tower']])
    assert.equal(read.statusCode, 200, read.body)
    assert.equal((await listOf(alice)).find((t) => t.name === 'form-read')?.scope, 'read')

    const refused = await post([['name', 'form-none'], ['scope', 'publish']])
    assert.equal(refused.statusCode, 400)
    assert.match(refused.body, /role="alert">A publish token needs at least one of your packs/)
    assert.match(refused.body, /id="scope-publish" value="publish" checked/)
    const twoTicked = await post([['name', 'form-bad'], ['scope', 'publish'], ['packs', 'alice:castle'], ['packs', 'bob:bob-pack']])
    assert.equal(twoTicked.statusCode, 400)
    assert.match(twoTicked.body, /Not among your packs: bob:bob-pack/)
    assert.match(twoTicked.body, /value="alice:castle" checked/)
  })
})

describe('packs token create with a reach', () => {
  const packs = (args: string[]) => runCli(args, undefined, cliEnvOf(site))
  const lastLine = (run: CliResult) => run.stdout.trimEnd().split('\n').at(-1)!

  test('--pack (repeatable) makes a publish-only token, --read-only a read-only one, --expires-in-days an expiry', async () => {
    const run = await packs(['token', 'create', 'alice', '--name', 'cli-ci', '--pack', 'alice:castle', '--pack', 'tower', '--expires-in-days', '7'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /^created publish-only \(new versions of alice:castle, alice:tower\) API token "cli-ci" for alice; it expires \d{4}-/)
    const raw = lastLine(run)
    assert.match(raw, /^packs_\S{20,}$/, 'the raw token alone on the last line')
    const headers = { authorization: `Bearer alice ${raw}` }
    assert.equal((await newVersion('alice', 'castle', headers)).statusCode, 201)
    expectError(await newVersion('alice', 'moat', headers), 403, /only publish new versions of alice:castle, alice:tower /)
    const listed = (await listOf(alice)).find((t) => t.name === 'cli-ci')!
    assert.equal(listed.scope, 'publish')
    const days = (Date.parse(listed.expires_at!) - Date.now()) / 86_400_000
    assert.ok(days > 6.9 && days <= 7, `expires in 7 days: ${listed.expires_at}`)

    const readRun = await packs(['token', 'create', 'alice', '--read-only'])
    assert.equal(readRun.code, 0, readRun.stderr)
    assert.match(readRun.stdout, /^created read-only API token "cli" for alice; it never expires;/)
    expectError(await uploadWith({ authorization: `Bearer alice ${lastLine(readRun)}` }), 403, /read-only/)

    const fullRun = await packs(['token', 'create', 'alice'])
    assert.match(fullRun.stdout, /^created full-access API token/)
    assert.equal((await uploadWith({ authorization: `Bearer alice ${lastLine(fullRun)}` })).statusCode, 200)
  })

  test('refusals: someone else\'s pack (exit 1, one line), and flags that do not fit (exit 2, usage)', async () => {
    const before = (await listOf(alice)).length
    const notYours = await packs(['token', 'create', 'alice', '--pack', 'bob:bob-pack'])
    assert.equal(notYours.code, 1)
    assert.equal(notYours.stderr, 'packs: not among your packs: bob:bob-pack (a publish token may only name packs you own or are in the team of)\n')
    assert.equal(notYours.stdout, '')
    for (const [args, pattern] of [
      [['--read-only', '--pack', 'castle'], /--read-only and --pack do not go together/],
      [['--expires-in-days', '0'], /--expires-in-days must be a whole number of days from 1 to 3650/],
      [['--expires-in-days', '3651'], /--expires-in-days must be/],
      [['--expires-in-days', 'soon'], /--expires-in-days must be/],
      [['--pack'], /--pack/],
    ] as Array<[string[], RegExp]>) {
      const run = await packs(['token', 'create', 'alice', ...args])
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
      assert.match(run.stderr, pattern)
      assert.match(run.stderr, /usage: packs token create <username> \[--name <label>\] \[--read-only \| --pack <namespace:pack_id> \.\.\.\] \[--expires-in-days <N>\]/)
    }
    assert.equal((await listOf(alice)).length, before, 'nothing was created')
  })
})
