// `npx packs pack hide|unhide|delete` and `user disable|enable` on a site the app serves at the same time: the commands run through
// the CLI's main() in this process (helpers/server.ts runCli) on the site's
// own environment, and their effects are checked through the running app.
// With REDIS_URL (the scaled combination) the CLI drops the update-check's
// cached answers on the running app, as a change on the site does; without
// it, the CLI says that a running server keeps its cached answers.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { cliEnvOf, expectError, siteWith, storedFiles, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack, saveDraft, upload, type PackJson } from '../helpers/packs.js'
import { datapack } from '../helpers/fixtures.js'
import { runCli, type CliResult } from '../helpers/server.js'

let site: TestSite
let alice: TestUser
let bob: TestUser
let root: TestUser

before(async () => {
  ;({ site, alice, bob, root } = await siteWith({ users: ['alice', 'bob'], staff: ['root'] }))
})
after(() => site.close())

const packs = (args: string[], options: { process?: boolean } = {}) => runCli(args, undefined, cliEnvOf(site), options)
const shared = () => site.config.redisUrl !== null

function ok(run: CliResult): CliResult {
  assert.equal(run.code, 0, `exit 0 expected; stdout: ${run.stdout} stderr: ${run.stderr}`)
  // Without Redis, one note and nothing else; with it, nothing.
  if (shared()) assert.equal(run.stderr, '')
  else assert.match(run.stderr, /^packs: note: without REDIS_URL, a running server keeps the update-check answers it has cached until it restarts;[^\n]*\n$/)
  return run
}

function refused(run: CliResult, pattern: RegExp): void {
  assert.equal(run.code, 1, `exit 1 expected; stdout: ${run.stdout} stderr: ${run.stderr}`)
  const lines = run.stderr.split('\n').filter((l) => l !== '')
  assert.equal(lines.length, 1, `one line on stderr, got: ${run.stderr}`)
  assert.match(lines[0]!, pattern)
  assert.equal(run.stdout, '')
}

function usageError(run: CliResult, pattern: RegExp): void {
  assert.equal(run.code, 2, `exit 2 expected; stderr: ${run.stderr}`)
  assert.match(run.stderr, pattern)
  assert.match(run.stderr, /usage: packs /)
}

const apiPack = (pack: PackJson, headers: Record<string, string>) => site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers })
const latest = (pack: PackJson) => site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/latest`, headers: site.gate })
const me = (user: TestUser) => site.app.inject({ url: '/api/me/', headers: user.headers })

async function lastAudit(): Promise<{ actor: string; action: string; target: string; details: Record<string, unknown> }> {
  const res = await site.app.inject({ url: '/api/audit/?per_page=1', headers: root.headers })
  assert.equal(res.statusCode, 200, res.body)
  const { actor, action, target, details } = (res.json() as { items: { actor: string; action: string; target: string; details: Record<string, unknown> }[] }).items[0]!
  return { actor, action, target, details }
}

describe('packs pack hide | unhide', () => {
  let pack: PackJson
  before(async () => { pack = await publishPack(site, alice, { title: 'CLI Target' }) })

  test('hides and unhides a pack as staff would, recorded as the admin CLI', async () => {
    assert.equal((await latest(pack)).statusCode, 200, 'an answer the running app has cached')
    const hidden = ok(await packs(['pack', 'hide', 'Alice:CLI-Target', '--reason', 'reported twice']))
    assert.equal(hidden.stdout, 'alice:cli-target is hidden: only its owner and staff see it\n')
    expectError(await apiPack(pack, bob.headers), 404)
    assert.equal((await apiPack(pack, alice.headers)).statusCode, 200, 'its owner still sees it')
    assert.deepEqual(await lastAudit(), { actor: '(admin CLI)', action: 'pack.hide', target: 'alice:cli-target', details: { reason: 'reported twice' } })
    // Through Redis, the running app's cached answer is gone at once.
    if (shared()) expectError(await latest(pack), 404)

    const shown = ok(await packs(['pack', 'unhide', 'alice:cli-target']))
    assert.equal(shown.stdout, 'alice:cli-target is visible again\n')
    assert.equal((await apiPack(pack, bob.headers)).statusCode, 200)
    assert.equal((await lastAudit()).action, 'pack.unhide')
    assert.equal((await latest(pack)).statusCode, 200)
  })

  test('refusals are one line and exit 1; a malformed command line exits 2', async () => {
    refused(await packs(['pack', 'hide', 'alice:no-such-pack']), /^packs: pack not found$/)
    refused(await packs(['pack', 'hide', 'alice:cli-target', '--reason', 'r'.repeat(501)]), /^packs: reason is longer than 500 characters$/)
    usageError(await packs(['pack', 'hide', 'cli-target']), /expected <namespace:pack_id>/)
    usageError(await packs(['pack', 'hide', ':x']), /expected <namespace:pack_id>/)
    usageError(await packs(['pack', 'hide']), /expected <namespace:pack_id>/)
    usageError(await packs(['pack', 'hide', 'alice:cli-target', '--force']), /Unknown option/i)
    assert.equal((await apiPack(pack, bob.headers)).statusCode, 200, 'nothing was hidden')
  })

  test('in a process of its own (`npx packs`), it finishes and exits, its connections closed', async () => {
    const run = await packs(['pack', 'hide', 'alice:cli-target'], { process: true })
    ok(run)
    expectError(await apiPack(pack, bob.headers), 404)
    ok(await packs(['pack', 'unhide', 'alice:cli-target'], { process: true }))
    assert.equal((await apiPack(pack, bob.headers)).statusCode, 200)
  })
})

describe('packs pack delete', () => {
  test('deletes a pack with its files, holds its id, recorded as the admin CLI', async () => {
    const pack = await publishPack(site, alice, { title: 'Going Away' }, { thumbnail: true })
    const before_ = await storedFiles(site)
    assert.equal((await latest(pack)).statusCode, 200)
    const run = ok(await packs(['pack', 'delete', 'ALICE:going-away']))
    assert.match(run.stdout, /^deleted alice:going-away; no new pack may take its id until \d{4}-\d\d-\d\dT[^ ]+Z\n$/)
    expectError(await apiPack(pack, alice.headers), 404)
    expectError(await apiPack(pack, root.headers), 404)
    if (shared()) expectError(await latest(pack), 404)
    assert.equal((await storedFiles(site)).length, before_.length - 2, 'its archive and thumbnail are gone')
    const audit = await lastAudit()
    assert.deepEqual([audit.actor, audit.action, audit.target], ['(admin CLI)', 'pack.delete', 'alice:going-away'])
    // Its id is not handed to a new pack.
    const draft = crypto.randomUUID()
    await saveDraft(site, alice, draft, { title: 'Going Away', version_name: '1' })
    await upload(site, alice, 'version', await datapack(48), { draft })
    expectError(await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: alice.headers, payload: { draft } }), 409, /held until/)
    refused(await packs(['pack', 'delete', 'alice:going-away']), /^packs: pack not found$/)
  })
})

describe('packs user disable | enable', () => {
  let pack: PackJson
  before(async () => { pack = await publishPack(site, bob, { title: 'Bob Things' }) })

  test('disables an account at once (token 401, packs hidden) and enables it again', async () => {
    assert.equal((await latest(pack)).statusCode, 200)
    const off = ok(await packs(['user', 'disable', 'BOB', '--reason', 'abuse']))
    assert.equal(off.stdout, 'bob is disabled: it cannot sign in, its sessions and tokens do not work, its packs are hidden\n')
    expectError(await me(bob), 401, /disabled/)
    expectError(await apiPack(pack, alice.headers), 404)
    assert.equal((await apiPack(pack, root.headers)).statusCode, 200)
    if (shared()) expectError(await latest(pack), 404)
    assert.deepEqual(await lastAudit(), { actor: '(admin CLI)', action: 'user.disable', target: 'bob', details: { reason: 'abuse', sessions_ended: 0 } })

    const on = ok(await packs(['user', 'enable', 'bob']))
    assert.equal(on.stdout, 'bob is enabled again\n')
    assert.equal((await me(bob)).statusCode, 200)
    assert.equal((await apiPack(pack, alice.headers)).statusCode, 200)
    assert.equal((await latest(pack)).statusCode, 200)
    assert.equal((await lastAudit()).action, 'user.enable')
  })

  test('the CLI may disable staff; an unknown user is refused in one line', async () => {
    ok(await packs(['user', 'disable', 'root']))
    expectError(await me(root), 401, /disabled/)
    ok(await packs(['user', 'enable', 'root']))
    assert.equal((await me(root)).statusCode, 200)
    refused(await packs(['user', 'disable', 'nobody']), /^packs: no user "nobody"$/)
    usageError(await packs(['user', 'disable']), /expected <username>/)
  })

  test('help lists the commands', async () => {
    const help = await packs(['help'])
    for (const command of ['pack hide <namespace:pack_id>', 'pack unhide <namespace:pack_id>', 'pack delete <namespace:pack_id>', 'user disable <username>', 'user enable <username>']) {
      assert.ok(help.stdout.includes(`packs ${command}`), `help mentions ${command}`)
    }
  })
})
