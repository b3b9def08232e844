// The admin CLI on a fresh data directory, its effects checked through the
// real app built on the same directory (and, when PACKS_TEST_DATABASE_URL is
// set, the same fresh PostgreSQL database: see helpers/database.ts). The
// commands run through the CLI's own main() in this process (helpers/server.ts
// runCli), which is what `npx packs` runs minus the process start; what only a
// process shows (the exit code the shell sees, stderr without a stack, `npx
// packs` loading at all) is checked on real `node bin/packs.js` processes.
// Files stay on the local disk on every backend combination: the doctor test
// plants debris with an old mtime, which an S3 object cannot be given
// (test/http/doctor.test.ts covers the doctor on S3).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config/index.js'
import type { App } from '../src/http/types.js'
import { expectError } from './helpers/app.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { datapack, multipart, png } from './helpers/fixtures.js'
import { lastLine, runCli, TEST_HASH_COST, type CliResult } from './helpers/server.js'
import { tempDir } from './helpers/temp.js'

const GATE = 'env-gate-password'

// The site's database when it is not the SQLite file in the data directory.
let database: TestDatabase = { url: undefined, drop: async () => {} }
const databaseEnv = (): Record<string, string> => (database.url ? { DATABASE_URL: database.url } : {})

/** `packs <args>` on the site in `dataDir`, in this process; `process: true` runs `node bin/packs.js` instead. */
function packs(dataDir: string, args: string[], extraEnv: Record<string, string> = {}, options: { process?: boolean } = {}): Promise<CliResult> {
  return runCli(args, undefined, { PACKS_DATA_DIR: dataDir, ...databaseEnv(), ...extraEnv }, options)
}

function ok(run: CliResult): CliResult {
  assert.equal(run.code, 0, `exit 0 expected; stderr: ${run.stderr}`)
  return run
}

/** A refused command: exit 1 and exactly one line on stderr, no stack frames. */
function refused(run: CliResult, pattern: RegExp): void {
  assert.equal(run.code, 1, `exit 1 expected; stdout: ${run.stdout} stderr: ${run.stderr}`)
  const lines = run.stderr.split('\n').filter((l) => l !== '')
  assert.equal(lines.length, 1, `one line on stderr, got: ${run.stderr}`)
  assert.match(lines[0]!, pattern)
  assert.doesNotMatch(run.stderr, /^\s+at /m)
}

function usageError(run: CliResult, pattern: RegExp): void {
  assert.equal(run.code, 2, `exit 2 expected; stderr: ${run.stderr}`)
  assert.match(run.stderr, pattern)
  assert.match(run.stderr, /usage: packs/)
  assert.doesNotMatch(run.stderr, /^\s+at /m)
}

async function appOn(dataDir: string, masterPassword?: string, env: Record<string, string> = databaseEnv()): Promise<App> {
  const settings: Record<string, string> = { PACKS_DATA_DIR: dataDir, PACKS_PASSWORD_HASH_COST: TEST_HASH_COST, ...env }
  if (masterPassword) settings.PACKS_MASTER_PASSWORD = masterPassword
  const app = await buildApp(loadConfig(settings), { logger: false, sweep: false })
  await app.ready()
  return app
}

describe('packs CLI', () => {
  let dataDir: string
  before(async () => {
    dataDir = tempDir('packs-cli-')
    database = await createTestDatabase()
  })
  after(async () => {
    await database.drop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  test('help lists every command and exits 0 (`npx packs` with no arguments: a real process)', async () => {
    // The process starts while the same help is asked of main() in this one (neither touches the site).
    const spawned = packs(dataDir, [], {}, { process: true })
    const runs: CliResult[] = []
    for (const args of [['help'], ['--help']]) runs.push(ok(await packs(dataDir, args)))
    runs.unshift(ok(await spawned))
    for (const [index, run] of runs.entries()) {
      for (const command of ['user create', 'user set-staff', 'token create', 'category create', 'tag create', 'master-password set', 'signing-key rotate', 'signing-key show', 'export', 'import', 'doctor']) {
        assert.ok(run.stdout.includes(`packs ${command}`), `help #${index} mentions ${command}`)
      }
      assert.equal(run.stderr, '')
    }
    assert.equal(runs[1]!.stdout, runs[0]!.stdout, 'the same help in and out of a process')
    const one = ok(await packs(dataDir, ['user', 'create', '--help']))
    assert.match(one.stdout, /^usage: packs user create <username> \(--password <password> \| --password-stdin\) \[--staff\]\n/)
  })

  test('creates users, tokens, categories and tags that the server then uses', async () => {
    // A fresh data directory: the CLI runs before any server has created the database.
    const created = ok(await packs(dataDir, ['user', 'create', 'Alice', '--password', 'alice-secret-pw']))
    assert.equal(created.stdout, 'created user Alice\n')
    assert.equal(ok(await packs(dataDir, ['user', 'create', 'bob', '--password', 'bob-secret-pw', '--staff'])).stdout, 'created staff user bob\n')
    ok(await packs(dataDir, ['user', 'create', 'carol', '--password', 'carol-secret-pw']))
    const tokenRun = ok(await packs(dataDir, ['token', 'create', 'Alice', '--name', 'laptop']))
    const token = lastLine(tokenRun.stdout)
    assert.match(token, /^\S{20,}$/, 'the last line is the raw token alone')
    assert.equal(ok(await packs(dataDir, ['user', 'set-staff', 'alice', 'true'])).stdout, 'Alice is now staff\n')
    assert.equal(ok(await packs(dataDir, ['user', 'set-staff', 'bob', 'false'])).stdout, 'bob is no longer staff\n')
    ok(await packs(dataDir, ['category', 'create', 'textures', '--name', 'Texture Packs', '--color', '#A1B2C3']))
    ok(await packs(dataDir, ['tag', 'create', 'Cozy Cottage', '--category', 'textures']))

    for (const run of [created, tokenRun]) {
      assert.ok(!run.stdout.includes('alice-secret-pw') && !run.stderr.includes('alice-secret-pw'), 'the password is never printed')
    }

    const app = await appOn(dataDir, GATE)
    try {
      const login = await app.inject({
        method: 'POST', url: '/login/', headers: { 'x-master-password': GATE }, payload: { username: 'alice', password: 'alice-secret-pw' },
      })
      assert.equal(login.statusCode, 200, login.body)
      assert.equal(login.json().username, 'Alice')

      const auth = { authorization: `Bearer Alice ${token}` }
      const me = await app.inject({ method: 'GET', url: '/api/me/', headers: auth })
      assert.equal(me.statusCode, 200, me.body)
      assert.deepEqual({ username: me.json().username, is_staff: me.json().is_staff }, { username: 'Alice', is_staff: true })
      const stats = await app.inject({ method: 'GET', url: '/api/stats/', headers: auth })
      assert.equal(stats.statusCode, 200, 'set-staff true makes the statistics available')

      const bobToken = lastLine(ok(await packs(dataDir, ['token', 'create', 'bob'])).stdout)
      const bobStats = await app.inject({ method: 'GET', url: '/api/stats/', headers: { authorization: `Bearer bob ${bobToken}` } })
      expectError(bobStats, 403)

      const tags = await app.inject({ method: 'GET', url: '/api/tags/autocomplete/?q=cozy', headers: { 'x-master-password': GATE } })
      assert.equal(tags.statusCode, 200)
      assert.deepEqual(tags.json(), [{ name: 'Cozy Cottage', category: 'textures', category_name: 'Texture Packs', color: '#a1b2c3' }])

      // Only the token's hash is stored.
      const rows = await app.db.selectFrom('api_tokens').selectAll().execute()
      assert.equal(rows.length, 2)
      const alices = rows.find((r) => r.name === 'laptop')!
      assert.equal(alices.token_hash, createHash('sha256').update(token).digest('hex'))
      for (const row of rows) {
        for (const value of Object.values(row)) assert.ok(!String(value).includes(token), 'no column holds the raw token')
      }
      const users = await app.db.selectFrom('users').selectAll().execute()
      for (const row of users) assert.ok(!JSON.stringify(row).includes('secret-pw'), 'passwords are stored hashed')
    } finally {
      await app.close()
    }
  })

  test('refuses taken or invalid names, unknown users and categories, bad colors: exit 1, one line', async () => {
    const cases: [string[], RegExp][] = [
      [['user', 'create', 'ALICE', '--password', 'another-password'], /taken/],
      [['user', 'create', 'no spaces', '--password', 'another-password'], /username/],
      [['user', 'create', 'x'.repeat(33), '--password', 'another-password'], /username/],
      [['user', 'create', 'dave', '--password', 'short'], /password/],
      [['user', 'set-staff', 'nobody', 'true'], /nobody/],
      [['token', 'create', 'nobody'], /nobody/],
      [['category', 'create', 'colors', '--name', 'Colors', '--color', 'red'], /color/],
      [['category', 'create', 'colors', '--name', 'Colors', '--color', '#12345'], /color/],
      [['category', 'create', 'Bad Key', '--name', 'Bad', '--color', '#123456'], /key/],
      [['category', 'create', 'textures', '--name', 'Again', '--color', '#123456'], /exists/],
      [['tag', 'create', 'cozy', '--category', 'nope'], /nope/],
      [['tag', 'create', 'COZY COTTAGE', '--category', 'textures'], /exists/],
      [['tag', 'create', 'x'.repeat(33), '--category', 'textures'], /tag name/],
    ]
    // The password comes from argv or from stdin (the curl walk-through in docs/using-the-api.md pipes it), never both, never
    // neither: a usage error (exit 2) with the command's usage line.
    for (const args of [['user', 'create', 'dave', '--password', 'another-password', '--password-stdin'], ['user', 'create', 'dave']]) {
      const run = await packs(dataDir, args)
      assert.equal(run.code, 2, run.stderr)
      assert.match(run.stderr, /^packs: give exactly one of --password <password> and --password-stdin\nusage: packs user create /)
    }
    // One after another: in one process, SQLite writers would wait on each other's locks.
    for (const [args, pattern] of cases) {
      const run = await packs(dataDir, args)
      refused(run, pattern)
      assert.equal(run.stdout, '', `packs ${args.join(' ')} prints nothing on stdout`)
    }

    const app = await appOn(dataDir, GATE)
    try {
      assert.equal(await app.db.selectFrom('users').select('id').where('username_lower', '=', 'dave').executeTakeFirst(), undefined)
      const categories = await app.db.selectFrom('categories').select('key').execute()
      assert.deepEqual(categories.map((c) => c.key), ['textures'])
      const tags = await app.db.selectFrom('tags').select('name').execute()
      assert.deepEqual(tags.map((t) => t.name), ['Cozy Cottage'])
    } finally {
      await app.close()
    }
  })

  test('usage errors: exit 2 with usage on stderr', async () => {
    // Refused before the site is opened: the process runs while the cases run here.
    const spawned = packs(dataDir, ['frobnicate'], {}, { process: true })
    const cases: [string[], RegExp][] = [
      [['frobnicate'], /unknown command/],
      [['user', 'delete', 'alice'], /unknown command/],
      [['user', 'create', 'erin'], /--password/],
      [['user', 'create', '--password', 'erin-password'], /username/],
      [['user', 'set-staff', 'alice', 'maybe'], /true or false/],
      [['token', 'create', 'alice', '--staff'], /--staff/],
      [['token', 'create', 'alice', '--name', 'x'.repeat(65)], /--name must be 1-64 characters/],
      [['category', 'create', 'misc', '--name', 'Misc'], /--color/],
      [['master-password', 'set'], /password/],
      [['master-password', 'set', '   '], /must not be empty/],
    ]
    for (const [args, pattern] of cases) {
      const run = await packs(dataDir, args)
      usageError(run, pattern)
      assert.equal(run.stdout, '')
    }
    usageError(await spawned, /unknown command/)
  })

  test('master-password set replaces the gate password', async () => {
    ok(await packs(dataDir, ['master-password', 'set', 'first-gate-password']))
    const run = ok(await packs(dataDir, ['master-password', 'set', 'second-gate-password']))
    assert.ok(!run.stdout.includes('second-gate-password') && !run.stderr.includes('second-gate-password'))
    assert.equal(run.stderr, '')

    // Without PACKS_MASTER_PASSWORD the server uses the stored password.
    const app = await appOn(dataDir)
    try {
      assert.equal(app.generatedMasterPassword, null, 'the stored password is kept, not regenerated')
      const pass = await app.inject({ method: 'GET', url: '/api/users/autocomplete/', headers: { 'x-master-password': 'second-gate-password' } })
      assert.equal(pass.statusCode, 200)
      const old = await app.inject({ method: 'GET', url: '/api/users/autocomplete/', headers: { 'x-master-password': 'first-gate-password' } })
      expectError(old, 401)
    } finally {
      await app.close()
    }
  })

  test('signing-key show and rotate: the server signs with the new key, and lists the old one as previous', async () => {
    const app = await appOn(dataDir, GATE)
    try {
      const first = ok(await packs(dataDir, ['signing-key', 'show']))
      const [line] = first.stdout.trim().split('\n')
      const match = /^([0-9a-f]{16})  current   ([A-Za-z0-9+/=]{44})$/.exec(line!)
      assert.ok(match, `one current key: ${first.stdout}`)
      const keyId = match[1]!
      const rotated = ok(await packs(dataDir, ['signing-key', 'rotate', '--grace-days', '3']))
      const fresh = /the signing key is now ([0-9a-f]{16}); the previous key ([0-9a-f]{16}) stays valid until (\S+)$/.exec(rotated.stdout.trim())
      assert.ok(fresh, rotated.stdout)
      assert.equal(fresh[2], keyId)
      assert.ok(Math.abs(Date.parse(fresh[3]!) - (Date.now() + 3 * 86_400_000)) < 60_000)
      await app.signing.reload()
      const keys = (await app.inject({ url: '/api/update-check/keys/', headers: { 'x-master-password': GATE } })).json() as { keys: { id: string; status: string }[] }
      assert.deepEqual(keys.keys.map((k) => [k.id, k.status]), [[fresh[1], 'current'], [keyId, 'previous']])
      const shown = ok(await packs(dataDir, ['signing-key', 'show'])).stdout.trim().split('\n')
      assert.equal(shown.length, 2)
      assert.match(shown[1]!, new RegExp(`^${keyId}  previous  .*  valid until `))
    } finally {
      await app.close()
    }
    usageError(await packs(dataDir, ['signing-key', 'rotate', '--grace-days', '1000']), /--grace-days must be a whole number of days from 0 to 365/)
    usageError(await packs(dataDir, ['signing-key', 'rotate', '--grace-days', '-1']), /--grace-days/)
  })

  test('master-password set warns when PACKS_MASTER_PASSWORD overrides it, and still stores it', async () => {
    const run = ok(await packs(dataDir, ['master-password', 'set', 'third-gate-password'], { PACKS_MASTER_PASSWORD: 'from-env' }))
    assert.match(run.stderr, /PACKS_MASTER_PASSWORD/)
    assert.ok(!run.stderr.includes('from-env') && !run.stderr.includes('third-gate-password'))
    const app = await appOn(dataDir)
    try {
      const pass = await app.inject({ method: 'GET', url: '/api/users/autocomplete/', headers: { 'x-master-password': 'third-gate-password' } })
      assert.equal(pass.statusCode, 200)
    } finally {
      await app.close()
    }
  })

  test('a bad configuration is one line and exit 1', async () => {
    // In a real process, as a shell script sees it: exit 1 and one line, not a stack from module loading.
    const spawned = packs(dataDir, ['user', 'create', 'frank', '--password', 'frank-password'], { DATABASE_URL: 'mysql://nope' }, { process: true })
    // Nothing listens on port 1: the refused connection is reported, not a stack.
    refused(
      await packs(dataDir, ['user', 'create', 'frank', '--password', 'frank-password'], { DATABASE_URL: 'postgres://packs@127.0.0.1:1/packs' }),
      /configuration error: DATABASE_URL: cannot connect to the PostgreSQL database: .*ECONNREFUSED/,
    )
    refused(await spawned, /DATABASE_URL/)
  })
})

describe('packs export, import and doctor', () => {
  const sites: { dir: string; database: TestDatabase }[] = []
  /** A fresh site: a data directory and, on PostgreSQL, a database of its own. */
  async function newSite(): Promise<{ dir: string; env: Record<string, string> }> {
    const site = { dir: tempDir('packs-cli-site-'), database: await createTestDatabase() }
    sites.push(site)
    return { dir: site.dir, env: site.database.url ? { DATABASE_URL: site.database.url } : {} }
  }
  after(async () => {
    for (const site of sites) {
      await site.database.drop()
      fs.rmSync(site.dir, { recursive: true, force: true })
    }
  })

  let source: { dir: string; env: Record<string, string> }
  let exportDir: string
  let fileIds: string[]
  before(async () => {
    source = await newSite()
    ok(await packs(source.dir, ['user', 'create', 'erin', '--password', 'erin-password'], source.env))
    const token = lastLine(ok(await packs(source.dir, ['token', 'create', 'erin'], source.env)).stdout)
    const app = await appOn(source.dir, GATE, source.env)
    try {
      for (const kind of ['thumbnail', 'media']) {
        const body = multipart([{ name: 'kind', value: kind }, { name: 'file', value: png(2, 2), filename: 'a.png' }])
        const res = await app.inject({ method: 'POST', url: '/api/uploads/', headers: { authorization: `Bearer erin ${token}`, ...body.headers }, payload: body.payload })
        assert.equal(res.statusCode, 200, res.body)
      }
      fileIds = (await app.db.selectFrom('files').select('id').execute()).map((f) => f.id)
    } finally {
      await app.close()
    }
    exportDir = path.join(tempDir('packs-cli-export-'), 'site')
    sites.push({ dir: path.dirname(exportDir), database: { url: undefined, drop: async () => {} } })
    // However permissive the umask, an export holds the site secret and every password hash.
    const umask = process.umask(0)
    try {
      ok(await packs(source.dir, ['export', exportDir], source.env))
    } finally {
      process.umask(umask)
    }
  })

  test('an export is readable by its owner only: directories 0700, files 0600, whatever the umask', () => {
    const entries = fs.readdirSync(exportDir, { recursive: true }) as string[]
    assert.ok(entries.includes('manifest.json') && entries.includes(path.join('tables', 'settings.jsonl')))
    assert.equal(fileIds.length, 2)
    for (const id of fileIds) assert.ok(entries.includes(path.join('files', id)))
    assert.equal(fs.statSync(exportDir).mode & 0o777, 0o700)
    for (const entry of entries) {
      const stats = fs.statSync(path.join(exportDir, entry))
      assert.equal(stats.mode & 0o777, stats.isDirectory() ? 0o700 : 0o600, `${entry} is ${(stats.mode & 0o777).toString(8)}`)
    }
  })

  test('an import of an export that lacks a file: one line, exit 1, nothing imported', async () => {
    const damaged = path.join(path.dirname(exportDir), 'damaged')
    fs.cpSync(exportDir, damaged, { recursive: true })
    fs.rmSync(path.join(damaged, 'files', fileIds[1]!))
    const target = await newSite()
    refused(await packs(target.dir, ['import', damaged], target.env), new RegExp(`^packs: .*lacks files/${fileIds[1]}.*incomplete, nothing was imported$`))
    const stored = fs.existsSync(path.join(target.dir, 'files')) ? (fs.readdirSync(path.join(target.dir, 'files'), { recursive: true }) as string[]) : []
    assert.deepEqual(stored.filter((p) => fs.statSync(path.join(target.dir, 'files', p)).isFile()), [])
    // The same site takes the complete export.
    assert.match(ok(await packs(target.dir, ['import', exportDir], target.env)).stdout, /^imported \d+ rows and 2 files \(\d+ bytes\) from .*; every file's SHA-256 matched\n$/)
    ok(await packs(target.dir, ['doctor'], target.env))
  })

  test('doctor: exit 0 when clean; what a crash leaves is found (exit 1) and repaired (exit 0); a published file\'s missing bytes remain (exit 1)', async () => {
    const clean = ok(await packs(source.dir, ['doctor'], source.env))
    assert.match(clean.stdout, /^packs doctor: checked 2 file rows, 2 stored objects and 0 unfinished writes; no problems$/m)

    // A crash: bytes stored an hour and a half ago with no row, and a write that never finished.
    const orphan = randomUUID()
    const partial = `${randomUUID()}.${randomUUID()}.partial`
    const files = path.join(source.dir, 'files')
    for (const name of [orphan, partial]) {
      fs.mkdirSync(path.join(files, name.slice(0, 2)), { recursive: true })
      fs.writeFileSync(path.join(files, name.slice(0, 2), name), 'left by a crash')
      const old = new Date(Date.now() - 90 * 60_000)
      fs.utimesSync(path.join(files, name.slice(0, 2), name), old, old)
    }
    const young = randomUUID()
    fs.mkdirSync(path.join(files, young.slice(0, 2)), { recursive: true })
    fs.writeFileSync(path.join(files, young.slice(0, 2), young), 'an upload in progress, maybe')

    // In a real process: exit 1 for "problems found" is what a cron job or a monitor reads.
    const found = await packs(source.dir, ['doctor'], source.env, { process: true })
    assert.equal(found.code, 1, found.stderr)
    assert.match(found.stdout, new RegExp(`^found {4}orphan-object ${orphan}: 15 bytes stored .* with no file row; packs doctor --repair removes it$`, 'm'))
    assert.match(found.stdout, new RegExp(`^found {4}unfinished-write ${partial.replace(/\./g, '\\.')}: 15 bytes, last written`, 'm'))
    assert.match(found.stdout, /; 2 found, 0 repaired, 2 remaining; left alone: 1 younger than 70m \(uploads may be in progress\)$/m)
    assert.match(found.stderr, /^packs: 2 problems remain \(packs doctor --repair fixes what is safe to fix\)$/m)

    const repaired = ok(await packs(source.dir, ['doctor', '--repair'], source.env))
    assert.match(repaired.stdout, new RegExp(`^repaired orphan-object ${orphan}:`, 'm'))
    assert.match(repaired.stdout, /; 2 found, 2 repaired, 0 remaining; left alone: 1 younger/m)
    assert.ok(fs.existsSync(path.join(files, young.slice(0, 2), young)), 'a young file is kept')
    ok(await packs(source.dir, ['doctor', '--repair', '--min-age', '0'], source.env))
    assert.ok(!fs.existsSync(path.join(files, young.slice(0, 2), young)), '--min-age 0: nothing is in flight, so nothing is young')
    usageError(await packs(source.dir, ['doctor', '--min-age', 'soon'], source.env), /--min-age: "soon" is not a duration/)

    // The bytes of a published version, gone: reported, never repaired by removing the version.
    const app = await appOn(source.dir, GATE, source.env)
    let versionFile: string
    try {
      const token = lastLine(ok(await packs(source.dir, ['token', 'create', 'erin'], source.env)).stdout)
      const auth = { authorization: `Bearer erin ${token}` }
      const draft = randomUUID()
      const saved = await app.inject({ method: 'POST', url: '/api/draft/', headers: auth, payload: { draft, data: { title: 'Doctor Pack', version_name: '1.0' } } })
      assert.equal(saved.statusCode, 200, saved.body)
      const body = multipart([{ name: 'kind', value: 'version' }, { name: 'draft_uuid', value: draft }, { name: 'file', value: await datapack(48), filename: 'p.zip' }])
      const uploaded = await app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...auth, ...body.headers }, payload: body.payload })
      assert.equal(uploaded.statusCode, 200, uploaded.body)
      versionFile = /files\/([0-9a-f-]{36})\//.exec(uploaded.json().url as string)![1]!
      const published = await app.inject({ method: 'POST', url: '/api/draft/publish/', headers: auth, payload: { draft } })
      assert.equal(published.statusCode, 201, published.body)
    } finally {
      await app.close()
    }
    fs.rmSync(path.join(files, versionFile.slice(0, 2), versionFile))
    const lost = await packs(source.dir, ['doctor', '--repair'], source.env)
    assert.equal(lost.code, 1)
    assert.match(lost.stdout, new RegExp(`^PROBLEM  missing-bytes ${versionFile}: PUBLISHED file .* of version erin:doctor-pack 1\\.0 has no stored bytes: downloads of it fail; restore key ${versionFile} from a backup of the store$`, 'm'))
    assert.equal(lost.stderr, 'packs: 1 problem remains after repair\n')
  })
})
