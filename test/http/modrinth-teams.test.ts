// A pack's team through the Modrinth-compatible API, read by a real Modrinth client library from npm
// (@xmcl/modrinth's getProjectTeamMembers) pointed at a listening Packs server, and by plain requests for the
// calls that library lacks (GET /v2/team/{id}/members, GET /v2/teams). Outsiders see the owner and accepted
// members with no permissions; the team and staff see invitations and each one's permission bits; a hidden
// pack's team is as invisible as the pack; the team id stays when the pack changes owner.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ModrinthV2Client, ModerinthApiError, type TeamMember } from '@xmcl/modrinth'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

let site: TestSite
let users: Record<'alice' | 'mara' | 'ulla' | 'ivy' | 'sam' | 'warden', TestUser>
let origin: string
let lamps: PackJson
let hidden: PackJson

const clientOf = (user: TestUser | null) =>
  new ModrinthV2Client({ baseUrl: `${origin}/api/modrinth`, headers: user ? { Authorization: user.token } : site.gate })
/** A request the library has no call for, sent as it sends its own: the token alone in Authorization. */
async function get(path: string, user: TestUser | null): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${origin}/api/modrinth${path}`, { headers: user ? { Authorization: user.token } : site.gate })
  return { status: res.status, body: await res.json() }
}
const slug = (p: PackJson) => `${p.namespace}:${p.pack_id}`
/** "username Role accepted permissions", one line per member, in the answer's order. */
const lines = (members: readonly TeamMember[]) =>
  members.map((m) => `${m.user.username} ${m.role} ${m.accepted} ${String(m.permissions)}`)

async function call(method: 'POST' | 'DELETE', path: string, user: TestUser, payload?: object): Promise<void> {
  const res = await site.app.inject({ method, url: path, headers: user.headers, ...(payload ? { payload } : {}) })
  assert.ok(res.statusCode < 300, `${method} ${path}: ${res.statusCode} ${res.body}`)
}
async function join(pack: PackJson, owner: TestUser, user: TestUser, role: 'maintainer' | 'uploader', accept = true): Promise<void> {
  await call('POST', `/api/packs/${pack.namespace}/${pack.pack_id}/team/`, owner, { username: user.username, role })
  if (accept) await call('POST', `/api/packs/${pack.namespace}/${pack.pack_id}/team/accept/`, user)
}

before(async () => {
  const made = await siteWith({ users: ['alice', 'mara', 'ulla', 'ivy', 'sam'], staff: ['warden'] })
  ;({ site } = made)
  users = made
  lamps = await publishPack(site, users.alice, { title: 'Lamps' })
  await join(lamps, users.alice, users.mara, 'maintainer')
  await join(lamps, users.alice, users.ulla, 'uploader')
  await join(lamps, users.alice, users.ivy, 'uploader', false)
  // Hidden by staff, with a staff member in its team.
  hidden = await publishPack(site, users.alice, { title: 'Hidden Lamps' })
  await join(hidden, users.alice, users.warden, 'maintainer')
  await call('POST', `/api/packs/${hidden.namespace}/${hidden.pack_id}/hide/`, users.warden, {})
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  const address = site.app.server.address()
  assert.ok(address && typeof address === 'object')
  origin = `http://127.0.0.1:${address.port}`
})
after(() => site.close())

describe('a pack\'s team through the Modrinth-compatible API', () => {
  test('anyone past the gate: the owner and accepted members, without permissions, invitations or payout splits', async () => {
    const project = await clientOf(users.sam).getProject(slug(lamps))
    assert.equal(project.team, project.id, 'the team id is the project\'s own id')
    for (const viewer of [users.sam, null]) {
      const members = await clientOf(viewer).getProjectTeamMembers(slug(lamps))
      assert.deepEqual(lines(members), ['alice Owner true null', 'mara Maintainer true null', 'ulla Uploader true null'])
      assert.deepEqual(members.map((m) => [m.team_id, (m as unknown as { payouts_split: unknown }).payouts_split, (m as unknown as { ordering: number }).ordering]),
        [[project.id, null, 0], [project.id, null, 1], [project.id, null, 2]])
      // By id too, and by the team id (which the library has no call for): the same list.
      assert.deepEqual(await clientOf(viewer).getProjectTeamMembers(project.id), members)
      assert.deepEqual(await get(`/v2/team/${project.team}/members`, viewer), { status: 200, body: members })
    }
    const [owner] = await clientOf(users.sam).getProjectTeamMembers(project.id)
    const aliceRow = await site.app.db.selectFrom('users').select(['id', 'created_at']).where('username', '=', 'alice').executeTakeFirstOrThrow()
    assert.deepEqual(owner!.user, { id: aliceRow.id, username: 'alice', name: null, avatar_url: null, bio: null, created: aliceRow.created_at, role: 'developer', badges: 0 })
    assert.equal((owner as unknown as { is_owner: boolean }).is_owner, true)
  })

  test('the team and staff: invitations (accepted false) and each one\'s Modrinth permission bits', async () => {
    const expected = [
      // Every bit Packs has a power for: UPLOAD_VERSION … DELETE_PROJECT.
      'alice Owner true 255',
      // All but DELETE_PROJECT (removing and re-roling only those below them).
      'mara Maintainer true 127',
      'ulla Uploader true 1',
      // What the invitation grants once accepted.
      'ivy Uploader false 1',
    ]
    for (const viewer of [users.alice, users.mara, users.ulla, users.warden]) {
      const members = await clientOf(viewer).getProjectTeamMembers(slug(lamps))
      assert.deepEqual(lines(members), expected, `as ${viewer.username}`)
      assert.deepEqual(members.map((m) => (m as unknown as { payouts_split: unknown }).payouts_split), [0, 0, 0, 0])
    }
    // An invitation is not membership: the invitee sees what outsiders see.
    assert.deepEqual(lines(await clientOf(users.ivy).getProjectTeamMembers(slug(lamps))),
      ['alice Owner true null', 'mara Maintainer true null', 'ulla Uploader true null'])
  })

  test('a hidden pack\'s team: not found for outsiders, shown to its team and staff (a staff member\'s site role is moderator)', async () => {
    const project = await clientOf(users.alice).getProject(slug(hidden))
    for (const viewer of [users.sam, users.mara, null]) {
      const refused = await clientOf(viewer).getProjectTeamMembers(slug(hidden)).then(() => 200, (error: unknown) => (error as ModerinthApiError).status)
      assert.equal(refused, 404)
      const byTeam = await get(`/v2/team/${project.team}/members`, viewer)
      assert.equal(byTeam.status, 404)
      assert.match((byTeam.body as { detail: string }).detail, /^no team /)
    }
    for (const viewer of [users.alice, users.warden]) {
      const members = await clientOf(viewer).getProjectTeamMembers(slug(hidden))
      assert.deepEqual(lines(members), ['alice Owner true 255', 'warden Maintainer true 127'])
      assert.deepEqual(members.map((m) => m.user.role), ['developer', 'moderator'])
    }
    // Several teams at once: those the caller may see, in the order asked; unknown ones left out.
    const lampsTeam = (await clientOf(users.sam).getProject(slug(lamps))).team
    const several = await get(`/v2/teams?ids=${encodeURIComponent(JSON.stringify([project.team, 'nOsuchId', lampsTeam]))}`, users.sam)
    assert.equal(several.status, 200)
    assert.deepEqual((several.body as TeamMember[][]).map(lines), [['alice Owner true null', 'mara Maintainer true null', 'ulla Uploader true null']])
    const both = await get(`/v2/teams?ids=${encodeURIComponent(JSON.stringify([lampsTeam, project.team]))}`, users.warden)
    assert.deepEqual((both.body as TeamMember[][]).map((team) => team.length), [4, 2])
  })

  test('refusals: a team is named by its id, not by namespace:pack_id; ids must be a JSON list', async () => {
    const byName = await get(`/v2/team/${encodeURIComponent(slug(lamps))}/members`, users.alice)
    assert.equal(byName.status, 404)
    assert.match((byName.body as { detail: string }).detail, /a team id is a project's "team"/)
    const bad = await get('/v2/teams?ids=lamps', users.alice)
    assert.equal(bad.status, 400)
    assert.match((bad.body as { detail: string }).detail, /ids must be a JSON array/)
    const unknown = await clientOf(users.alice).getProjectTeamMembers('zzzzzzzz').then(() => 200, (error: unknown) => (error as ModerinthApiError).status)
    assert.equal(unknown, 404)
  })

  test('handing the pack over: the team id stays, the new owner is "Owner" and the old one a maintainer', async () => {
    const before_ = await clientOf(users.sam).getProject(slug(lamps))
    await call('POST', `/api/packs/${lamps.namespace}/${lamps.pack_id}/transfer/`, users.alice, { username: users.mara.username })
    await call('POST', `/api/packs/${lamps.namespace}/${lamps.pack_id}/transfer/accept/`, users.mara)
    const after_ = await clientOf(users.sam).getProject(slug(lamps))
    assert.equal(after_.team, before_.team)
    const members = await get(`/v2/team/${after_.team}/members`, users.mara)
    assert.deepEqual(lines(members.body as TeamMember[]), ['mara Owner true 255', 'ulla Uploader true 1', 'alice Maintainer true 127', 'ivy Uploader false 1'])
    // A member whose account staff disabled stays listed but may do nothing while it is disabled.
    await site.app.db.updateTable('users').set({ disabled_at: new Date().toISOString() }).where('username', '=', 'ulla').execute()
    try {
      assert.deepEqual(lines(await clientOf(users.mara).getProjectTeamMembers(slug(lamps))),
        ['mara Owner true 255', 'ulla Uploader true 0', 'alice Maintainer true 127', 'ivy Uploader false 1'])
    } finally {
      await site.app.db.updateTable('users').set({ disabled_at: null }).where('username', '=', 'ulla').execute()
    }
  })
})
