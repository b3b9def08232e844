// A pack's team through the API: invitations and their refusals, lapsing, accepting and declining; handing the
// pack over (its namespace:pack_id never changes); a removed member's publish token stops reaching the pack; the
// listing by member; co-authors a draft invites on publish; and every step in the audit log with who did it.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, saveDraft, upload, type PackJson } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser, bob: TestUser, cara: TestUser, dan: TestUser, root: TestUser
let now = Date.parse('2026-11-28T12:00:00Z')
const DAY = 86_400_000

before(async () => {
  ;({ site, alice, bob, cara, dan, root } = await siteWith({ users: ['alice', 'bob', 'cara', 'dan'], staff: ['root'], clock: () => now }))
})
after(() => site.close())

const team = (p: Pick<PackJson, 'namespace' | 'pack_id'>, rest = '') => `/api/packs/${p.namespace}/${p.pack_id}/team/${rest}`
const call = (method: string, url: string, user: TestUser | null, payload?: object) =>
  site.app.inject({ method: method as 'GET', url, headers: user ? user.headers : site.gate, ...(payload ? { payload } : {}) })

async function status(res: Promise<LightMyRequestResponse>, expected: number): Promise<LightMyRequestResponse> {
  const r = await res
  assert.equal(r.statusCode, expected, r.body)
  return r
}

async function auditActions(target: string): Promise<string[]> {
  const res = await status(call('GET', `/api/audit/?target=${encodeURIComponent(target)}&per_page=100`, root), 200)
  return (res.json() as { items: Array<{ action: string; actor: string }> }).items.map((e) => `${e.actor} ${e.action}`).reverse()
}

describe('invitations', () => {
  test('are refused clearly for yourself, an unknown name, a disabled account, the owner, a member and someone invited', async () => {
    const pack = await publishPack(site, alice, { title: 'Refusals' })
    expectError(await call('POST', team(pack), alice, { username: 'alice', role: 'uploader' }), 400, /yourself/)
    expectError(await call('POST', team(pack), alice, { username: 'nobody', role: 'uploader' }), 404, /no account named "nobody"/)
    const eve = await site.user('eve')
    await status(call('POST', '/api/users/eve/disable/', root, { reason: 'tests' }), 200)
    expectError(await call('POST', team(pack), alice, { username: eve.username, role: 'uploader' }), 409, /disabled/)
    await status(call('POST', team(pack), alice, { username: 'bob', role: 'maintainer' }), 201)
    expectError(await call('POST', team(pack), alice, { username: 'BOB', role: 'uploader' }), 409, /invited already/)
    await status(call('POST', team(pack, 'accept/'), bob), 200)
    expectError(await call('POST', team(pack), alice, { username: 'bob', role: 'uploader' }), 409, /in this pack's team already \(as its maintainer\)/)
    expectError(await call('POST', team(pack), bob, { username: 'alice', role: 'uploader' }), 409, /owns this pack already/)
    expectError(await call('POST', team(pack), alice, { username: 'cara', role: 'owner' }), 400)
    // A stranger cannot even tell the pack has a team to join.
    expectError(await call('POST', team(pack), dan, { username: 'cara', role: 'uploader' }), 404, /^pack not found$/)
  })

  test('grant nothing until accepted, show to the team only, lapse after 14 days, and can be declined or withdrawn', async () => {
    const pack = await publishPack(site, alice, { title: 'Waiting' })
    await status(call('POST', team(pack), alice, { username: 'cara', role: 'maintainer' }), 201)
    const inbox = (await status(call('GET', '/api/invitations/', cara), 200)).json() as Array<{ pack_id: string; role: string; invited_by: string }>
    assert.deepEqual(inbox.map((i) => [i.pack_id, i.role, i.invited_by]), [['waiting', 'maintainer', 'alice']])
    // Invited, cara may not edit the pack yet.
    expectError(await call('PATCH', `/api/packs/alice/waiting/`, cara, { revision: pack.revision, summary: 'x' }), 404)
    const seenByOwner = (await status(call('GET', team(pack), alice), 200)).json() as { members: Array<{ username: string; accepted: boolean }> }
    assert.deepEqual(seenByOwner.members.map((m) => [m.username, m.accepted]), [['alice', true], ['cara', false]])
    const seenByStranger = (await status(call('GET', team(pack), dan), 200)).json() as { members: Array<{ username: string }> }
    assert.deepEqual(seenByStranger.members.map((m) => m.username), ['alice'])
    // 14 days later the invitation has lapsed: nothing to accept, and it can be sent again.
    now += 15 * DAY
    expectError(await call('POST', team(pack, 'accept/'), cara), 404, /no invitation/)
    assert.deepEqual((await status(call('GET', '/api/invitations/', cara), 200)).json(), [])
    await status(call('POST', team(pack), alice, { username: 'cara', role: 'uploader' }), 201)
    await status(call('DELETE', team(pack, 'cara/'), cara), 204)
    await status(call('POST', team(pack), alice, { username: 'cara', role: 'uploader' }), 201)
    await status(call('DELETE', team(pack, 'cara/'), alice), 204)
    expectError(await call('POST', team(pack, 'accept/'), cara), 404)
    assert.deepEqual(await auditActions('alice:waiting'), [
      'alice pack.publish', 'alice team.invite', 'alice team.invite', 'cara team.decline', 'alice team.invite', 'alice team.withdraw',
    ])
  })
})

describe('at the same moment', () => {
  test('twenty invitations of one person: one is sent, the rest are 409; ten offers of the pack: one stands', async () => {
    const pack = await publishPack(site, alice, { title: 'Race' })
    const invites = await Promise.all(Array.from({ length: 20 }, () => call('POST', team(pack), alice, { username: 'bob', role: 'uploader' })))
    assert.deepEqual(invites.map((r) => r.statusCode).sort(), [201, ...Array.from({ length: 19 }, () => 409)], invites.map((r) => r.body).join('\n'))
    for (const r of invites.filter((r) => r.statusCode === 409)) assert.match((r.json() as { detail: string }).detail, /invited already/)
    await status(call('POST', team(pack, 'accept/'), bob), 200)
    const offers = await Promise.all(Array.from({ length: 10 }, () => call('POST', '/api/packs/alice/race/transfer/', alice, { username: 'bob' })))
    assert.deepEqual(offers.map((r) => r.statusCode), Array.from({ length: 10 }, () => 204), offers.map((r) => r.body).join('\n'))
    const seen = (await status(call('GET', team(pack), alice), 200)).json() as { transfer: { to: string } | null }
    assert.equal(seen.transfer?.to, 'bob')
  })
})

describe('removing and leaving', () => {
  test('a removed uploader\'s publish token stops reaching the pack at once; the owner cannot leave', async () => {
    const pack = await publishPack(site, alice, { title: 'Tokens' })
    await status(call('POST', team(pack), alice, { username: 'dan', role: 'uploader' }), 201)
    await status(call('POST', team(pack, 'accept/'), dan), 200)
    const login = await status(site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: 'dan', password: dan.password } }), 200)
    const cookie = `packs_session=${login.cookies.find((c) => c.name === 'packs_session')!.value}`
    const created = await status(site.app.inject({
      method: 'POST', url: '/api/tokens/', headers: { cookie, 'x-csrf-token': (login.json() as { csrf_token: string }).csrf_token },
      payload: { name: 'ci', scope: 'publish', packs: ['alice:tokens'] },
    }), 201)
    const ci = { ...site.gate, authorization: `Bearer dan ${(created.json() as { token: string }).token}` }
    const publish = async (name: string) => {
      const form = multipart([{ name: 'version_name', value: name }, { name: 'file', filename: 'pack.zip', value: await datapack() }])
      return site.app.inject({ method: 'POST', url: '/api/packs/alice/tokens/versions/', headers: { ...ci, ...form.headers }, payload: form.payload })
    }
    await status(publish('2.0.0'), 201)
    await status(call('DELETE', team(pack, 'dan/'), alice), 204)
    expectError(await publish('3.0.0'), 403, /whose teams its owner has left/)
    expectError(await call('DELETE', team(pack, 'alice/'), alice), 409, /owner cannot leave/)
    assert.deepEqual(await auditActions('alice:tokens@2.0.0'), ['dan version.publish'])
  })
})

describe('handing a pack over', () => {
  test('goes to an accepted member only, when they accept; namespace:pack_id stays; the old owner stays as maintainer', async () => {
    const pack = await publishPack(site, alice, { title: 'Heirloom' })
    expectError(await call('POST', `/api/packs/alice/heirloom/transfer/`, alice, { username: 'bob' }), 409, /only to a member/)
    await status(call('POST', team(pack), alice, { username: 'bob', role: 'uploader' }), 201)
    await status(call('POST', team(pack, 'accept/'), bob), 200)
    // A maintainer may not hand it over; only its owner.
    expectError(await call('POST', `/api/packs/alice/heirloom/transfer/`, bob, { username: 'bob' }), 404)
    await status(call('POST', `/api/packs/alice/heirloom/transfer/`, alice, { username: 'bob' }), 204)
    const offered = (await status(call('GET', team(pack), bob), 200)).json() as { transfer: { to: string } | null }
    assert.equal(offered.transfer?.to, 'bob')
    expectError(await call('POST', `/api/packs/alice/heirloom/transfer/accept/`, cara), 404)
    const taken = (await status(call('POST', `/api/packs/alice/heirloom/transfer/accept/`, bob), 200)).json() as PackJson
    assert.equal(taken.owner, 'bob')
    assert.equal(`${taken.namespace}:${taken.pack_id}`, 'alice:heirloom')
    assert.deepEqual(taken.team, [{ username: 'alice', role: 'maintainer' }])
    // The update-check answers under the same name as before.
    await status(call('GET', '/api/packs/alice/heirloom/latest', null), 200)
    // Now bob owns it: alice, a maintainer, may no longer delete it.
    expectError(await call('DELETE', '/api/packs/alice/heirloom/', alice), 404, /maintainer you may not delete/)
    assert.deepEqual(await auditActions('alice:heirloom'), [
      'alice pack.publish', 'alice team.invite', 'bob team.accept', 'alice pack.transfer-offer', 'bob pack.transfer',
    ])
  })
})

describe('finding packs by a member and inviting from a draft', () => {
  test('the listing filters by member; a draft\'s co-authors are invited when it is published', async () => {
    const draft = randomUUID()
    await saveDraft(site, cara, draft, { title: 'Group Work', version_name: '1.0.0', team: [{ username: 'dan', role: 'maintainer' }] })
    await upload(site, cara, 'version', await datapack(), { draft })
    await status(site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: cara.headers, payload: { draft } }), 201)
    const inbox = (await status(call('GET', '/api/invitations/', dan), 200)).json() as Array<{ namespace: string; pack_id: string; role: string }>
    assert.ok(inbox.some((i) => i.namespace === 'cara' && i.pack_id === 'group-work' && i.role === 'maintainer'), JSON.stringify(inbox))
    const listed = async () => ((await status(call('GET', '/api/packs/?member=DAN', null), 200)).json() as { items: PackJson[] }).items.map((p) => p.id)
    assert.ok(!(await listed()).includes('cara:group-work'), 'an invitation is not membership')
    await status(call('POST', '/api/packs/cara/group-work/team/accept/', dan), 200)
    assert.ok((await listed()).includes('cara:group-work'))
    assert.deepEqual(((await status(call('GET', '/api/packs/?member=nobody-at-all', null), 200)).json() as { items: unknown[] }).items, [])
    // A draft naming someone who is not there publishes nothing, and says whom.
    const bad = randomUUID()
    await saveDraft(site, cara, bad, { title: 'Lonely', version_name: '1.0.0', team: [{ username: 'ghost', role: 'uploader' }] })
    await upload(site, cara, 'version', await datapack(), { draft: bad })
    expectError(await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: cara.headers, payload: { draft: bad } }), 400, /no account is named "ghost"/)
    await status(call('GET', '/api/packs/cara/lonely/', null), 404)
  })
})
