// Who may do what to a pack with a team, through the real routes: every kind of caller × every action,
// against a table written out here (not derived from src/packs/policy.ts, which it checks). The pack is
// hidden by staff for the whole walk, so "see" means seeing a hidden pack. Each allowed action is undone
// afterwards (or done on a throwaway pack) so the cells do not depend on their order.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

type Headers = Record<string, string>
type Action = 'see' | 'see-pending' | 'publish-version' | 'edit-changelog' | 'edit' | 'manage-versions' | 'invite' | 'manage-member'
  | 'delete' | 'transfer' | 'leave'
const ACTIONS: Action[] = ['see', 'see-pending', 'publish-version', 'edit-changelog', 'edit', 'manage-versions', 'invite', 'manage-member', 'delete', 'transfer', 'leave']

/** ✓ allowed, · refused. The columns are ACTIONS in order. */
const EXPECTED: Record<string, string> = {
  //                  see pend publ chlg edit vers invi memb dele tran leav
  'owner':            '✓    ✓    ✓    ✓    ✓    ✓    ✓    ✓    ✓    ✓    ·',
  'maintainer':       '✓    ✓    ✓    ✓    ✓    ✓    ✓    ✓    ·    ·    ✓',
  'uploader':         '✓    ✓    ✓    ✓    ·    ·    ·    ·    ·    ·    ✓',
  'staff':            '✓    ✓    ✓    ✓    ✓    ✓    ✓    ✓    ✓    ·    ·',
  // Its one ✓ is declining the invitation (DELETE …/team/<self>/), which changes nothing of the pack.
  'pending invitee':  '·    ·    ·    ·    ·    ·    ·    ·    ·    ·    ✓',
  'removed member':   '·    ·    ·    ·    ·    ·    ·    ·    ·    ·    ·',
  'disabled member':  '·    ·    ·    ·    ·    ·    ·    ·    ·    ·    ·',
  'stranger':         '·    ·    ·    ·    ·    ·    ·    ·    ·    ·    ·',
  'read token of maintainer':    '✓    ✓    ·    ·    ·    ·    ·    ·    ·    ·    ·',
  'publish token of uploader':   '✓    ✓    ✓    ·    ·    ·    ·    ·    ·    ·    ·',
}

let site: TestSite
let users: Record<'alice' | 'mara' | 'ulla' | 'ivy' | 'remy' | 'dino' | 'sam' | 'extra' | 'root', TestUser>
let pack: PackJson
let versionId: string
let counter = 0

function url(p: Pick<PackJson, 'namespace' | 'pack_id'>, rest = ''): string {
  return `/api/packs/${p.namespace}/${p.pack_id}/${rest}`
}

async function call(method: string, path: string, headers: Headers, payload?: unknown): Promise<LightMyRequestResponse> {
  return site.app.inject({ method: method as 'GET', url: path, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
}

async function ok(res: LightMyRequestResponse | Promise<LightMyRequestResponse>, status: number): Promise<LightMyRequestResponse> {
  const r = await res
  assert.equal(r.statusCode, status, r.body)
  return r
}

async function inviteAccepted(owner: TestUser, p: PackJson, user: TestUser, role: 'maintainer' | 'uploader'): Promise<void> {
  await ok(call('POST', url(p, 'team/'), owner.headers, { username: user.username, role }), 201)
  await ok(call('POST', url(p, 'team/accept/'), user.headers), 200)
}

async function newVersion(p: PackJson, headers: Headers): Promise<LightMyRequestResponse> {
  const form = multipart([
    { name: 'version_name', value: `v${++counter}` },
    { name: 'file', filename: 'pack.zip', value: await datapack() },
  ])
  return call('POST', url(p, 'versions/'), { ...headers, ...form.headers }, form.payload)
}

/** A token with a reach, made as its owner makes one: from a signed-in session. */
async function tokenOf(user: TestUser, body: Record<string, unknown>): Promise<Headers> {
  const login = await ok(call('POST', '/login/', site.gate, { username: user.username, password: user.password }), 200)
  const cookie = `packs_session=${login.cookies.find((c) => c.name === 'packs_session')!.value}`
  const csrf = (login.json() as { csrf_token: string }).csrf_token
  const res = await ok(call('POST', '/api/tokens/', { cookie, 'x-csrf-token': csrf }, { name: `t${++counter}`, ...body }), 201)
  return { ...site.gate, authorization: `Bearer ${user.username} ${(res.json() as { token: string }).token}` }
}

/** A pack of alice's with the same team, for the actions that cannot be undone. */
async function throwaway(): Promise<PackJson> {
  const p = await publishPack(site, users.alice, { title: `Throwaway ${++counter}` })
  await inviteAccepted(users.alice, p, users.mara, 'maintainer')
  await inviteAccepted(users.alice, p, users.ulla, 'uploader')
  return p
}

/** Tries the action as `headers` (whose user is `who`); returns whether it was allowed, undoing it if it was. */
async function attempt(action: Action, who: TestUser, headers: Headers): Promise<boolean> {
  const owner = users.alice.headers
  switch (action) {
    case 'see':
      return (await call('GET', url(pack), headers)).statusCode === 200
    case 'see-pending': {
      const res = await call('GET', url(pack, 'team/'), headers)
      return res.statusCode === 200 && (res.json() as { members: Array<{ accepted: boolean }> }).members.some((m) => !m.accepted)
    }
    case 'publish-version':
      return (await newVersion(pack, headers)).statusCode === 201
    case 'edit-changelog':
      return (await call('PATCH', url(pack, `versions/${versionId}/`), headers, { changelog: `note ${++counter}` })).statusCode === 200
    case 'edit': {
      const revision = ((await ok(call('GET', url(pack), owner), 200)).json() as PackJson).revision
      return (await call('PATCH', url(pack), headers, { revision, summary: `summary ${++counter}` })).statusCode === 200
    }
    case 'manage-versions': {
      const allowed = (await call('PATCH', url(pack, `versions/${versionId}/`), headers, { yanked: true })).statusCode === 200
      if (allowed) await ok(call('PATCH', url(pack, `versions/${versionId}/`), owner, { yanked: false }), 200)
      return allowed
    }
    case 'invite': {
      const allowed = (await call('POST', url(pack, 'team/'), headers, { username: 'extra', role: 'uploader' })).statusCode === 201
      if (allowed) await ok(call('DELETE', url(pack, 'team/extra/'), owner), 204)
      return allowed
    }
    case 'manage-member':
      // Setting the uploader's role to what it is: the permission is checked, nothing changes.
      return (await call('PATCH', url(pack, 'team/ulla/'), headers, { role: 'uploader' })).statusCode === 200
    case 'delete': {
      const p = await throwaway()
      if (who.username === 'ivy') await ok(call('POST', url(p, 'team/'), users.alice.headers, { username: 'ivy', role: 'maintainer' }), 201)
      return (await call('DELETE', url(p), headers)).statusCode === 204
    }
    case 'transfer': {
      const allowed = (await call('POST', url(pack, 'transfer/'), headers, { username: 'mara' })).statusCode === 204
      if (allowed) await ok(call('DELETE', url(pack, 'transfer/'), owner), 204)
      return allowed
    }
    case 'leave': {
      const allowed = (await call('DELETE', url(pack, `team/${who.username}/`), headers)).statusCode === 204
      if (allowed && who.username === 'ivy') {
        // An invitee "leaving" declines the invitation (no power over the pack): invite them again, unanswered.
        await ok(call('POST', url(pack, 'team/'), owner, { username: 'ivy', role: 'maintainer' }), 201)
      } else if (allowed) {
        await inviteAccepted(users.alice, pack, who, who.username === 'mara' ? 'maintainer' : 'uploader')
      }
      return allowed
    }
  }
}

before(async () => {
  const made = await siteWith({ users: ['alice', 'mara', 'ulla', 'ivy', 'remy', 'dino', 'sam', 'extra'], staff: ['root'] })
  site = made.site
  users = made
  pack = await publishPack(site, users.alice, { title: 'Team Pack' })
  versionId = pack.versions[0]!.id
  await inviteAccepted(users.alice, pack, users.mara, 'maintainer')
  await inviteAccepted(users.alice, pack, users.ulla, 'uploader')
  await inviteAccepted(users.alice, pack, users.remy, 'uploader')
  await ok(call('DELETE', url(pack, 'team/remy/'), users.alice.headers), 204)
  await inviteAccepted(users.alice, pack, users.dino, 'maintainer')
  await ok(call('POST', url(pack, 'team/'), users.alice.headers, { username: 'ivy', role: 'maintainer' }), 201)
  // Staff hide it: "see" is then a question of the team.
  await ok(call('POST', `${url(pack)}hide/`, users.root.headers, { reason: 'checking the team' }), 200)
})
after(() => site.close())

describe('every caller × every action, on a pack hidden by staff', () => {
  const callers: Record<string, () => Promise<{ who: TestUser; headers: Headers }>> = {
    'owner': async () => ({ who: users.alice, headers: users.alice.headers }),
    'maintainer': async () => ({ who: users.mara, headers: users.mara.headers }),
    'uploader': async () => ({ who: users.ulla, headers: users.ulla.headers }),
    'staff': async () => ({ who: users.root, headers: users.root.headers }),
    'pending invitee': async () => ({ who: users.ivy, headers: users.ivy.headers }),
    'removed member': async () => ({ who: users.remy, headers: users.remy.headers }),
    'disabled member': async () => {
      await ok(call('POST', '/api/users/dino/disable/', users.root.headers, { reason: 'tests' }), 200)
      return { who: users.dino, headers: users.dino.headers }
    },
    'stranger': async () => ({ who: users.sam, headers: users.sam.headers }),
    'read token of maintainer': async () => ({ who: users.mara, headers: await tokenOf(users.mara, { scope: 'read' }) }),
    'publish token of uploader': async () => ({ who: users.ulla, headers: await tokenOf(users.ulla, { scope: 'publish', packs: [`${pack.namespace}:${pack.pack_id}`] }) }),
  }
  for (const [caller, row] of Object.entries(EXPECTED)) {
    test(caller, async () => {
      const { who, headers } = await callers[caller]!()
      const expected = row.split(/\s+/).map((cell) => cell === '✓')
      assert.equal(expected.length, ACTIONS.length)
      const got: string[] = []
      for (const action of ACTIONS) got.push(`${action}: ${(await attempt(action, who, headers)) ? '✓' : '·'}`)
      assert.deepEqual(got, ACTIONS.map((action, i) => `${action}: ${expected[i] ? '✓' : '·'}`))
    })
  }
})
