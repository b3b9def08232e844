// A pack's team on the site's pages, through app.inject: the team page's and the invitations page's forms work
// without JavaScript (a browser session posting with its CSRF token: invite, refusals shown on the page, change a
// role, withdraw, accept, offer and accept ownership, leave); the pack page shows each control exactly to the
// roles the policy lets use it, and lists the team (invitations only to the team and staff); profiles list the
// packs a user is in with their role, a hidden one only to whoever may see it; the header counts invitations.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { siteWith, type TestSite, type TestUser, signIn, type Session } from '../helpers/app.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

const HTML = { accept: 'text/html,application/xhtml+xml' }

let site: TestSite
let alice: TestUser, bob: TestUser, cara: TestUser, dan: TestUser, eve: TestUser, root: TestUser

before(async () => {
  ;({ site, alice, bob, cara, dan, eve, root } = await siteWith({ users: ['alice', 'bob', 'cara', 'dan', 'eve'], staff: ['root'] }))
})
after(() => site.close())


function page(url: string, who: Session | TestUser | null) {
  const headers = who === null ? site.gate : 'cookie' in who ? { ...site.gate, cookie: who.cookie } : who.headers
  return site.app.inject({ url, headers: { ...HTML, ...headers } })
}

/** A plain HTML form's post (what a browser without JavaScript sends). */
function form(url: string, who: Session, fields: Record<string, string>, csrf = true) {
  return site.app.inject({
    method: 'POST', url,
    headers: { ...HTML, ...site.gate, cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ ...fields, ...(csrf ? { csrf_token: who.csrf } : {}) }).toString(),
  })
}

async function api(method: string, url: string, user: TestUser, payload?: object, expected = 200) {
  const res = await site.app.inject({ method: method as 'POST', url, headers: user.headers, ...(payload ? { payload } : {}) })
  assert.equal(res.statusCode, expected, res.body)
  return res
}

/** The team page's (or pack page's) members as "name role [invited]", in order. */
function members(body: string): string[] {
  return [...body.matchAll(/<li class="team-member"[^>]*>([\s\S]*?)<\/li>/g)].map(([, item]) => {
    const name = /class="member-name"[^>]*>([^<]+)</.exec(item!)![1]
    const role = /class="role-badge[^"]*">([^<]+)</.exec(item!)![1]
    return `${name} ${role}${item!.includes('invited-badge">invited<') ? ' invited' : ''}`
  })
}

describe('the team page without JavaScript', () => {
  test('invites, shows refusals with their reason, changes a role, withdraws, hands the pack over and leaves', async () => {
    const pack = await publishPack(site, alice, { title: 'Lamps' })
    const base = `/packs/${pack.namespace}/${pack.pack_id}/`
    const [a, b] = [await signIn(site, alice), await signIn(site, bob)]

    const empty = await page(`${base}team/`, a)
    assert.equal(empty.statusCode, 200, empty.body)
    assert.match(empty.body, /<form id="invite-form"[^>]*method="post" action="\/packs\/alice\/lamps\/team\/"/)
    assert.ok(empty.body.includes(`name="csrf_token" value="${a.csrf}"`), 'the form carries the session\'s CSRF token')
    assert.deepEqual(members(empty.body), ['alice owner'])

    // Without the token the post is refused; with it, bob is invited and the page says so.
    assert.equal((await form(`${base}team/`, a, { username: 'bob', role: 'maintainer' }, false)).statusCode, 403)
    const invited = await form(`${base}team/`, a, { username: 'bob', role: 'maintainer' })
    assert.equal(invited.statusCode, 303, invited.body)
    assert.equal(invited.headers.location, `${base}team/?done=invited`)
    const after = await page(`${base}team/?done=invited`, a)
    assert.match(after.body, /role="status">Invitation sent\./)
    assert.deepEqual(members(after.body), ['alice owner', 'bob maintainer invited'])

    // Refusals: the page again, the API's reason on it, the name kept in the field.
    const unknown = await form(`${base}team/`, a, { username: 'nobody', role: 'uploader' })
    assert.equal(unknown.statusCode, 404)
    assert.match(unknown.body, /role="alert">There is no account named &quot;nobody&quot;\./)
    assert.match(unknown.body, /id="invite-username" name="username" value="nobody"/)
    const twice = await form(`${base}team/`, a, { username: 'BOB', role: 'uploader' })
    assert.equal(twice.statusCode, 409)
    assert.match(twice.body, /Bob is invited already; withdraw that invitation to send another\./)
    const badRole = await form(`${base}team/`, a, { username: 'cara', role: 'owner' })
    assert.equal(badRole.statusCode, 400)
    assert.match(badRole.body, /Choose a role: maintainer or uploader\./)

    // bob's header counts the invitation; he accepts it on his invitations page and lands on the pack.
    const home = await page('/', b)
    assert.match(home.body, /<a href="\/invitations\/">Invitations <span class="count-badge">1<\/span><\/a>/)
    const inbox = await page('/invitations/', b)
    assert.match(inbox.body, /<a href="\/packs\/alice\/lamps\/">Lamps<\/a>/)
    assert.match(inbox.body, /invites you as <span class="role-badge role-maintainer">maintainer<\/span>/)
    const accepted = await form(`${base}team/accept/`, b, {})
    assert.equal(accepted.statusCode, 303, accepted.body)
    assert.equal(accepted.headers.location, base)
    assert.doesNotMatch((await page('/', b)).body, /count-badge/)
    assert.match((await page('/invitations/', b)).body, /Nothing waits for your answer/)

    // cara invited as uploader, made maintainer while invited, then the invitation withdrawn.
    assert.equal((await form(`${base}team/`, a, { username: 'cara', role: 'uploader' })).statusCode, 303)
    const role = await form(`${base}team/cara/role/`, a, { role: 'maintainer' })
    assert.equal(role.statusCode, 303, role.body)
    assert.deepEqual(members((await page(`${base}team/`, a)).body), ['alice owner', 'bob maintainer', 'cara maintainer invited'])
    const withdrawn = await form(`${base}team/cara/remove/`, a, {})
    assert.equal(withdrawn.headers.location, `${base}team/?done=withdrawn`)
    assert.deepEqual(members((await page(`${base}team/`, a)).body), ['alice owner', 'bob maintainer'])

    // A maintainer may not hand the pack over: the page says why.
    const notOwner = await form(`${base}transfer/`, b, { username: 'bob' })
    assert.equal(notOwner.statusCode, 404)
    assert.match(notOwner.body, /Pack not found for you: as its maintainer you may not hand this pack to someone else\./)

    // alice offers the pack to bob; bob sees the offer and takes it; alice stays as a maintainer, then leaves.
    assert.equal((await form(`${base}transfer/`, a, { username: 'bob' })).headers.location, `${base}team/?done=offered`)
    assert.match((await page(`${base}team/`, a)).body, /Ownership offered to <strong>bob<\/strong>/)
    const offer = await page('/invitations/', b)
    assert.match(offer.body, /<strong>alice<\/strong> offers you the pack/)
    const taken = await form(`${base}transfer/accept/`, b, {})
    assert.equal(taken.statusCode, 303, taken.body)
    assert.deepEqual(members((await page(`${base}team/`, b)).body), ['bob owner', 'alice maintainer'])
    const left = await form(`${base}team/alice/remove/`, a, {})
    assert.equal(left.statusCode, 303, left.body)
    assert.equal(left.headers.location, base)
    assert.deepEqual(members((await page(base, null)).body), ['bob owner'])
  })
})

describe('the pack page by role', () => {
  let pack: PackJson
  let base: string
  before(async () => {
    pack = await publishPack(site, alice, { title: 'Bells' })
    base = `/packs/${pack.namespace}/${pack.pack_id}/`
    // cara joins first, as uploader, so the list's order by role is not the order of joining.
    for (const [user, role] of [[cara, 'uploader'], [bob, 'maintainer']] as const) {
      await api('POST', `/api${base}team/`, alice, { username: user.username, role }, 201)
      await api('POST', `/api${base}team/accept/`, user)
    }
    await api('POST', `/api${base}team/`, alice, { username: 'eve', role: 'uploader' }, 201)
  })

  const controls = async (user: TestUser | null) => {
    const res = await page(base, user)
    assert.equal(res.statusCode, 200, res.body)
    const has = (pattern: RegExp) => pattern.test(res.body)
    return {
      edit: has(/>Edit pack<\/a>/), delete: has(/>Delete pack…<\/a>/), newVersion: has(/<form id="new-version"/),
      changelog: has(/<summary>Edit changelog<\/summary>/), yank: has(/>Yank<\/button>/), manageTeam: has(/>Manage the team<\/a>/),
      team: members(res.body),
    }
  }

  test('each control shows exactly to the roles the policy lets use it', async () => {
    const all = { edit: true, delete: true, newVersion: true, changelog: true, yank: true, manageTeam: true }
    const none = { edit: false, delete: false, newVersion: false, changelog: false, yank: false, manageTeam: false }
    const teamSeen = ['alice owner', 'bob maintainer', 'cara uploader', 'eve uploader invited']
    const teamPublic = ['alice owner', 'bob maintainer', 'cara uploader']
    assert.deepEqual(await controls(alice), { ...all, team: teamSeen })
    assert.deepEqual(await controls(bob), { ...all, delete: false, team: teamSeen })
    assert.deepEqual(await controls(cara), { ...none, newVersion: true, changelog: true, manageTeam: true, team: teamSeen })
    assert.deepEqual(await controls(root), { ...all, team: teamSeen })
    // An invitation grants nothing: eve sees what a stranger sees.
    assert.deepEqual(await controls(eve), { ...none, team: teamPublic })
    assert.deepEqual(await controls(dan), { ...none, team: teamPublic })
    assert.deepEqual(await controls(null), { ...none, team: teamPublic })
  })

  test('the team page offers each person the forms their role allows', async () => {
    const forms = async (user: TestUser) => {
      const body = (await page(`${base}team/`, user)).body
      return [...body.matchAll(/<form class="team-form[^"]*"[^>]*aria-label="([^"]+)"/g)].map(([, label]) => label!.replace(/&#39;/g, '\''))
        .concat(body.includes('id="invite-form"') ? ['Invite'] : [])
    }
    assert.deepEqual(await forms(alice), [
      'Change bob\'s role', 'Remove bob', 'Offer ownership to bob', 'Change cara\'s role', 'Remove cara', 'Offer ownership to cara',
      'Change eve\'s role', 'Withdraw eve\'s invitation', 'Invite',
    ])
    // A maintainer manages uploaders and invitations, not another maintainer nor the owner; never hands the pack over.
    assert.deepEqual(await forms(bob), ['Leave the team', 'Remove cara', 'Change eve\'s role', 'Withdraw eve\'s invitation', 'Invite'])
    assert.deepEqual(await forms(cara), ['Leave the team'])
    assert.deepEqual(await forms(root), [
      'Change bob\'s role', 'Remove bob', 'Change cara\'s role', 'Remove cara', 'Change eve\'s role', 'Withdraw eve\'s invitation', 'Invite',
    ])
    assert.deepEqual(await forms(dan), [])
  })

  test('a profile lists the packs a user is in with their role, a hidden one only to those who may see it', async () => {
    const hidden = await publishPack(site, alice, { title: 'Quiet Bells' })
    await api('POST', `/api/packs/alice/${hidden.pack_id}/team/`, alice, { username: 'cara', role: 'maintainer' }, 201)
    await api('POST', `/api/packs/alice/${hidden.pack_id}/team/accept/`, cara)
    await api('POST', `/api/packs/alice/${hidden.pack_id}/hide/`, root, { reason: 'tests' })
    const teams = async (viewer: TestUser | null) => {
      const body = (await page('/users/cara/', viewer)).body
      return [...body.matchAll(/<li class="member-pack">\s*<a href="[^"]+">([^<]+)<\/a>\s*<span class="role-badge[^"]*">([^<]+)</g)].map(([, t, r]) => `${t} ${r}`)
    }
    assert.deepEqual(await teams(dan), ['Bells uploader'])
    assert.deepEqual(await teams(null), ['Bells uploader'])
    assert.deepEqual(await teams(cara), ['Quiet Bells maintainer', 'Bells uploader'])
    assert.deepEqual(await teams(root), ['Quiet Bells maintainer', 'Bells uploader'])
  })
})
