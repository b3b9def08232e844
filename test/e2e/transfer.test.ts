// backends: scaled — the move itself crosses the combinations: SQLite + disk → PostgreSQL + S3 → SQLite + disk
// Moving a whole site: `packs export <dir>` from one site, `packs import <dir>`
// into a new one, and back. Every row of every table and every file's SHA-256
// must be the same on the other side, and the moved site must work: tokens,
// passwords, sessions and the gate password included. The source and the way
// back are SQLite + disk whatever the run, so the scaled combination's run
// covers both kinds of site (run alone without PACKS_TEST_DATABASE_URL, the
// move goes to another embedded site).
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { openDatabase, type Db } from '../../src/db/index.js'
import { TABLES, TABLES_SINCE_VERSION_2, TABLES_SINCE_VERSION_3, TABLES_SINCE_VERSION_4, TABLES_SINCE_VERSION_5, TABLES_SINCE_VERSION_6 } from '../../src/maintenance/transfer-repository.js'
import { openFileStore } from '../../src/storage/index.js'
import { TEST_DATABASE_URL } from '../helpers/database.js'
import { addPendingUpload, seedDemoSite, type DemoSite } from '../helpers/demo.js'
import { LOOPBACK_WEBHOOKS, WebhookReceiver } from '../helpers/receiver.js'
import { until } from '../helpers/wait.js'
import { datapack } from '../helpers/fixtures.js'
import { runCli, startServer, suiteBackends, tempDataDir, type RunningServer, type SuiteBackends } from '../helpers/server.js'
import { sha256Of, sortedRows } from '../helpers/site-contents.js'
import { tempDir } from '../helpers/temp.js'

const SITE_PASSWORD = 'transfer-site-password'

interface Backend {
  name: string
  env: Record<string, string>
  databaseUrl: string
  storageUrl: string
}

/** A site on SQLite and the local disk in a fresh data directory. */
function embeddedBackend(): Backend {
  const dataDir = tempDataDir()
  return {
    name: 'SQLite + disk',
    env: { PACKS_DATA_DIR: dataDir },
    databaseUrl: `sqlite:${path.join(dataDir, 'packs.db')}`,
    storageUrl: `file:${path.join(dataDir, 'files')}`,
  }
}

const releaseLater: SuiteBackends[] = []

/**
 * The scaled-out site: a fresh PostgreSQL database, bucket on the local
 * S3-compatible server and Redis database (helpers/server.ts suiteBackends).
 * Without PACKS_TEST_DATABASE_URL, another embedded site.
 */
async function scaledBackend(): Promise<Backend> {
  if (!TEST_DATABASE_URL) return embeddedBackend()
  const backends = await suiteBackends()
  releaseLater.push(backends)
  const dataDir = tempDataDir()
  assert.ok(backends.bucket, 'the scaled combination stores files on S3 (PACKS_TEST_STORAGE=s3)')
  return {
    name: backends.name,
    env: { PACKS_DATA_DIR: dataDir, ...backends.env },
    databaseUrl: backends.databaseUrl(dataDir),
    storageUrl: backends.bucket.storageUrl,
  }
}

interface Snapshot {
  rows: Record<string, string[]>
  files: Record<string, string>
}

/** Every row of every table (as sorted JSON lines) and every stored file's SHA-256, read straight from the backends. */
async function snapshot(backend: Backend): Promise<Snapshot> {
  const db: Db = await openDatabase(backend.databaseUrl)
  const store = await openFileStore(backend.storageUrl)
  try {
    const rows: Record<string, string[]> = {}
    for (const table of TABLES) {
      // packs.search_seq is SQLite's key into its own title index (migration 0007): null on PostgreSQL, and
      // given afresh on import. Every other column, owner_disabled included, must come back the same.
      rows[table] = await sortedRows(db, table, table === 'packs' ? ['search_seq'] : [])
    }
    const files: Record<string, string> = {}
    for (const file of await db.selectFrom('files').select(['id', 'storage_key']).execute()) {
      files[file.id] = await sha256Of(await store.get(file.storage_key))
    }
    return { rows, files }
  } finally {
    await store.close()
    await db.destroy()
  }
}

/**
 * The search index as a site's search sees it, by namespace:pack_id (row ids travel, but say less in a failure):
 * each pack's words, kinds, public versions and trending figure, its releases, and the vocabulary's counts.
 */
async function searchIndexOf(backend: Backend): Promise<unknown> {
  const db: Db = await openDatabase(backend.databaseUrl)
  try {
    const entries = await db.selectFrom('pack_search').innerJoin('packs', 'packs.id', 'pack_search.pack_row_id')
      .select(['packs.namespace', 'packs.pack_id', 'pack_search.terms', 'pack_search.kinds', 'pack_search.public_versions', 'pack_search.trending'])
      .execute()
    const releases = await db.selectFrom('pack_releases').innerJoin('packs', 'packs.id', 'pack_releases.pack_row_id')
      .select(['packs.namespace', 'packs.pack_id', 'pack_releases.release']).execute()
    const terms = await db.selectFrom('search_terms').select(['term', 'docs']).execute()
    const packs = Number((await db.selectFrom('packs').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n)
    return {
      indexed: `${entries.length} of ${packs} packs`,
      entries: entries.map((e) => `${e.namespace}:${e.pack_id} kinds ${Number(e.kinds)} public ${Number(e.public_versions)} trending ${Number(e.trending)} | ${e.terms}`).sort(),
      releases: releases.map((r) => `${r.namespace}:${r.pack_id} ${r.release}`).sort(),
      terms: terms.map((t) => `${t.term} ${Number(t.docs)}`).sort(),
    }
  } finally {
    await db.destroy()
  }
}

/** What the backend's store holds, finished or not: nothing, after a refused import. */
async function storeContents(backend: Backend): Promise<string[]> {
  const store = await openFileStore(backend.storageUrl)
  try {
    const keys: string[] = []
    for await (const object of store.list()) keys.push(object.key)
    for await (const write of store.listUnfinished()) keys.push(`unfinished ${write.key}`)
    return keys
  } finally {
    await store.close()
  }
}

/** A refusal is one line on stderr, no stack, exit code 1. */
function assertRefused(result: { code: number | null; stdout: string; stderr: string }, expected: string): void {
  assert.equal(result.code, 1, result.stderr)
  assert.equal(result.stderr, `packs: ${expected}\n`)
  assert.equal(result.stdout, '')
}

async function cli(args: string[], backend: Backend): Promise<string> {
  const result = await runCli(args, undefined, { ...backend.env, PACKS_MASTER_PASSWORD: undefined })
  assert.equal(result.code, 0, `packs ${args.join(' ')}: ${result.stderr}`)
  return result.stdout
}

describe('moving a site between backends', () => {
  const source = embeddedBackend()
  let server: RunningServer
  let demo: DemoSite
  let sessionCookie: string
  let before_: Snapshot
  const exportDirs: string[] = []

  before(async () => {
    // The gate password is the stored one (no PACKS_MASTER_PASSWORD), so it has to travel with the site.
    await cli(['master-password', 'set', SITE_PASSWORD], source)
    server = await startServer({ env: { ...source.env, ...LOOPBACK_WEBHOOKS } })
    // Stopped whatever happens: a failed step must fail the file, not leave it waiting on a running server.
    try {
      demo = await seedDemoSite(server)
      // A pending upload that never reached a pack, and a live browser session.
      await addPendingUpload(server, demo.creator)
      const login = await fetch(`${server.url}/login/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-master-password': SITE_PASSWORD },
        body: JSON.stringify({ username: demo.creator.username, password: demo.creator.password }),
      })
      const loginText = await login.text()
      assert.equal(login.status, 200, loginText)
      sessionCookie = /packs_session=[^;]+/.exec(login.headers.get('set-cookie') ?? '')![0]
      // The tables of managing published packs: a hidden pack and the audit log (the demo's publishes are in it already), a deleted
      // pack's held id, a publish token's packs, a download counted (written when the server stops).
      const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' })
      const [hideNs, hideId] = demo.packs[1]!.split(':')
      const hidden = await fetch(`${server.url}/api/packs/${hideNs}/${hideId}/hide/`, {
        method: 'POST', headers: json(demo.staff.headers), body: JSON.stringify({ reason: 'moved while hidden' }),
      })
      assert.equal(hidden.status, 200, await hidden.text())
      // A pack of its own, published and deleted: the demo's packs and files stay as they are.
      const draft = randomUUID()
      const archive = new FormData()
      archive.set('kind', 'version')
      archive.set('draft_uuid', draft)
      const shortLived = await datapack(48)
      archive.set('file', new Blob([new Uint8Array(shortLived)]), 'short.zip')
      const uploaded = await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers: demo.creator.headers, body: archive })
      assert.equal(uploaded.status, 200, await uploaded.text())
      const saved = await fetch(`${server.url}/api/draft/`, {
        method: 'POST', headers: json(demo.creator.headers), body: JSON.stringify({ draft, data: { title: 'Short Lived', version_name: '1' } }),
      })
      assert.equal(saved.status, 200, await saved.text())
      const published = await fetch(`${server.url}/api/draft/publish/`, { method: 'POST', headers: json(demo.creator.headers), body: JSON.stringify({ draft }) })
      const publishedText = await published.text()
      assert.equal(published.status, 201, publishedText)
      const gone = JSON.parse(publishedText) as { namespace: string; pack_id: string }
      const deleted = await fetch(`${server.url}/api/packs/${gone.namespace}/${gone.pack_id}/`, { method: 'DELETE', headers: demo.creator.headers })
      assert.equal(deleted.status, 204, await deleted.text())
      await cli(['token', 'create', demo.creator.username, '--name', 'ci', '--pack', demo.packs[0]!], source)
      // A team: staff joins the creator's first pack as a maintainer and is offered its ownership (still open).
      const [teamNs, teamId] = demo.packs[0]!.split(':')
      const team = `${server.url}/api/packs/${teamNs}/${teamId}`
      const invited = await fetch(`${team}/team/`, { method: 'POST', headers: json(demo.creator.headers), body: JSON.stringify({ username: demo.staff.username, role: 'maintainer' }) })
      assert.equal(invited.status, 201, await invited.text())
      const joined = await fetch(`${team}/team/accept/`, { method: 'POST', headers: demo.staff.headers })
      assert.equal(joined.status, 200, await joined.text())
      const offered = await fetch(`${team}/transfer/`, { method: 'POST', headers: json(demo.creator.headers), body: JSON.stringify({ username: demo.staff.username }) })
      assert.ok(offered.ok, await offered.text())
      // Hearing about updates: staff follows a pack (the hide above and the invitation told their owners already),
      // the creator has a feed token, and a webhook that delivered one event (its outbox row and its try).
      const followed = await fetch(`${team}/follow/`, { method: 'POST', headers: demo.staff.headers })
      assert.equal(followed.status, 200, await followed.text())
      const { csrf_token: csrf } = JSON.parse(loginText) as { csrf_token: string }
      const feedToken = await fetch(`${server.url}/api/me/feed-token/`, {
        method: 'POST', headers: { cookie: sessionCookie, 'x-master-password': SITE_PASSWORD, 'x-csrf-token': csrf },
      })
      assert.equal(feedToken.status, 201, await feedToken.text())
      const receiver = await WebhookReceiver.start()
      try {
        const hook = await fetch(`${team}/webhooks/`, {
          method: 'POST', headers: json(demo.creator.headers), body: JSON.stringify({ url: receiver.url, format: 'json', events: ['version.published'] }),
        })
        const hookText = await hook.text()
        assert.equal(hook.status, 201, hookText)
        const { id: hookId } = JSON.parse(hookText) as { id: string }
        const version = new FormData()
        version.set('version_name', 'moved-1')
        version.set('file', new Blob([new Uint8Array(await datapack(57))]), 'moved.zip')
        const added = await fetch(`${team}/versions/`, { method: 'POST', headers: demo.creator.headers, body: version })
        assert.equal(added.status, 201, await added.text())
        await until(async () => {
          const log = (await (await fetch(`${team}/webhooks/${hookId}/deliveries/`, { headers: demo.creator.headers })).json()) as { items: Array<{ state: string }> }
          return log.items.some((a) => a.state === 'delivered') ? true : undefined
        }, 'the webhook delivery')
      } finally {
        await receiver.close()
      }
      // Its archive stays claimed (held) for the creator; staff let another user publish a copy of it.
      await cli(['archive', 'allow', createHash('sha256').update(shortLived).digest('hex'), demo.staff.username], source)
      const [ns, id] = demo.packs[0]!.split(':')
      const check = (await (await fetch(`${server.url}/api/packs/${ns}/${id}/latest`, { headers: { 'x-master-password': SITE_PASSWORD } })).json()) as { download_url: string }
      const download = await fetch(check.download_url, { headers: { 'x-master-password': SITE_PASSWORD } })
      assert.equal(download.status, 200)
      await download.arrayBuffer()
    } finally {
      await server.stop()
    }
    before_ = await snapshot(source)
  })
  after(async () => {
    for (const dir of exportDirs) fs.rmSync(dir, { recursive: true, force: true })
    for (const backends of releaseLater) await backends.release()
  })

  function newExportDir(): string {
    const dir = path.join(tempDir('packs-export-'), 'site')
    exportDirs.push(path.dirname(dir))
    return dir
  }

  async function move(from: Backend, to: Backend): Promise<void> {
    const dir = newExportDir()
    assert.match(await cli(['export', dir], from), /exported \d+ rows and \d+ files/)
    assert.match(await cli(['import', dir], to), /every file's SHA-256 matched/)
  }

  test('the filled site has something in every table', () => {
    for (const table of TABLES) assert.ok(before_.rows[table]!.length > 0, `${table} has rows`)
    const actions = before_.rows.audit_log!.map((row) => (JSON.parse(row) as { action: string }).action)
    assert.ok(actions.includes('pack.publish') && actions.includes('pack.hide'), `the audit log has publishes and the hide: ${actions.join(', ')}`)
    assert.ok(Object.keys(before_.files).length >= 13, 'thumbnails, media, versions and the pending upload are stored')
  })

  test(`there and back (${TEST_DATABASE_URL ? 'SQLite + disk -> PostgreSQL + S3 -> SQLite + disk' : 'between two embedded sites'}): every row and every file SHA-256 is the same, and the moved site works`, async () => {
    const target = await scaledBackend()
    await move(source, target)
    assert.deepEqual(await snapshot(target), before_)
    // The search index is not in the export: the import built it from the rows, trending from the daily downloads.
    assert.deepEqual(await searchIndexOf(target), await searchIndexOf(source))

    const moved = await startServer({ env: { ...target.env } })
    try {
      const me = await fetch(`${moved.url}/api/me/`, { headers: demo.creator.headers })
      assert.equal(me.status, 200, 'the API token still works')
      const session = await fetch(`${moved.url}/api/me/`, { headers: { cookie: sessionCookie } })
      assert.equal(session.status, 200, 'the browser session still works')
      const login = await fetch(`${moved.url}/login/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-master-password': SITE_PASSWORD },
        body: JSON.stringify({ username: demo.staff.username, password: demo.staff.password }),
      })
      assert.equal(login.status, 200, 'the password and the stored gate password still work')
      const [namespace, packId] = demo.packs[0]!.split(':')
      const latest = await fetch(`${moved.url}/api/packs/${namespace}/${packId}/latest`, { headers: { 'x-master-password': SITE_PASSWORD } })
      const body = (await latest.json()) as { download_url: string }
      const download = await fetch(body.download_url, { headers: { 'x-master-password': SITE_PASSWORD } })
      assert.equal(download.status, 200)
      // The signing key moved with the site secret: updaters that pinned it keep trusting the moved site.
      const stored = before_.rows.settings!.map((row) => JSON.parse(row) as { key: string; value: string }).find((row) => row.key === 'signing_keys')
      assert.ok(stored, 'the export holds the signing keys')
      const keyId = (JSON.parse(stored.value) as { keys: { id: string }[] }).keys.at(-1)!.id
      assert.match(latest.headers.get('packs-signature') ?? '', new RegExp(`^keyid="${keyId}", sig=:`))
      // Searchable at once: words, a typo, a filter and the trending sort (the downloaded pack first).
      const search = async (query: string) => {
        const res = await fetch(`${moved.url}/api/packs/?${query}`, { headers: { 'x-master-password': SITE_PASSWORD } })
        assert.equal(res.status, 200, query)
        return ((await res.json()) as { items: { namespace: string; pack_id: string }[] }).items.map((p) => `${p.namespace}:${p.pack_id}`)
      }
      assert.deepEqual(await search('q=mossy%20dungeons'), [demo.packs[0]])
      assert.deepEqual(await search('q=dungeosn'), [demo.packs[0]])
      assert.equal((await search('sort=trending&kind=data'))[0], demo.packs[0])
      assert.ok(!(await search('q=crisp')).includes(demo.packs[1]!), 'the hidden pack stays out of search')
    } finally {
      await moved.stop()
    }

    // Using the moved site changed it (a sign-in, a token's last use): the way back carries that too.
    const used = await snapshot(target)
    assert.equal(used.rows.sessions!.length, before_.rows.sessions!.length + 1)
    const back = embeddedBackend()
    await move(target, back)
    assert.deepEqual(await snapshot(back), used)
    assert.deepEqual(await searchIndexOf(back), await searchIndexOf(target), 'the index built again on the way back')
    // SQLite's own text index (pack_text) too: the moved-back site finds the pack by its words.
    const home = await startServer({ env: { ...back.env } })
    try {
      const res = await fetch(`${home.url}/api/packs/?q=mossy`, { headers: { 'x-master-password': SITE_PASSWORD } })
      assert.equal(res.status, 200)
      assert.deepEqual(((await res.json()) as { items: { namespace: string; pack_id: string }[] }).items.map((p) => `${p.namespace}:${p.pack_id}`), [demo.packs[0]])
    } finally {
      await home.stop()
    }
  })

  test('an import refuses a site that is not empty, and a changed file is caught by its SHA-256', async () => {
    const dir = newExportDir()
    await cli(['export', dir], source)
    const refused = await runCli(['import', dir], undefined, source.env)
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /^packs: the target site is not empty/)

    const fileId = Object.keys(before_.files)[0]!
    fs.appendFileSync(path.join(dir, 'files', fileId), 'tampered')
    const target = embeddedBackend()
    const tampered = await runCli(['import', dir], undefined, target.env)
    assert.equal(tampered.code, 1)
    assert.match(tampered.stderr, new RegExp(`file ${fileId}: SHA-256 [0-9a-f]{64} .* does not match`))
    const after = await snapshot(target)
    assert.equal(after.rows.users!.length, 0, 'no rows were imported')
    assert.deepEqual(after.files, {}, 'no files were left behind')
  })

  test('an import refuses, in one line and before writing anything, an export that lacks a stored file', async () => {
    const dir = newExportDir()
    await cli(['export', dir], source)
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { files: Record<string, { size: number }> }
    const fileId = Object.keys(manifest.files).sort()[0]!
    fs.rmSync(path.join(dir, 'files', fileId))
    const target = await scaledBackend()
    assertRefused(await runCli(['import', dir], undefined, target.env),
      `${dir} lacks files/${fileId} (${manifest.files[fileId]!.size} bytes in the manifest): the export is incomplete, nothing was imported`)
    const after = await snapshot(target)
    for (const table of TABLES) assert.deepEqual(after.rows[table], [], `${table} is empty (settings too: no import marker)`)
    assert.deepEqual(await storeContents(target), [], 'no file was written')
  })

  test('an import refuses, in one line and before writing anything, rows that name a file the export lacks', async () => {
    const dir = newExportDir()
    await cli(['export', dir], source)
    // An export that lacks one version's file altogether: no row, no manifest entry, no bytes.
    const tableFile = (table: string) => path.join(dir, 'tables', `${table}.jsonl`)
    const readTable = (table: string) => fs.readFileSync(tableFile(table), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, string>)
    const version = readTable('versions')[0]!
    const pack = readTable('packs').find((p) => p.id === version.pack_id)!
    const fileId = version.file_id!
    const files = readTable('files').filter((file) => file.id !== fileId)
    fs.writeFileSync(tableFile('files'), files.map((file) => JSON.stringify(file) + '\n').join(''))
    const manifestFile = path.join(dir, 'manifest.json')
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { tables: Record<string, number>; files: Record<string, unknown> }
    manifest.tables.files = files.length
    delete manifest.files[fileId]
    fs.writeFileSync(manifestFile, JSON.stringify(manifest))
    fs.rmSync(path.join(dir, 'files', fileId))

    const target = await scaledBackend()
    assertRefused(await runCli(['import', dir], undefined, target.env),
      `${dir} lacks file ${fileId}, which version ${version.name} of ${pack.namespace}:${pack.pack_id} uses: the export is incomplete, nothing was imported`)
    const after = await snapshot(target)
    for (const table of TABLES) assert.deepEqual(after.rows[table], [], `${table} is empty`)
    assert.deepEqual(await storeContents(target), [], 'no file was written')
  })

  test('an export of version 1 (before hidden packs and archive claims) still imports: the new tables empty or rebuilt, the new columns at their defaults', async () => {
    const dir = newExportDir()
    await cli(['export', dir], source)
    // Turn it into what the previous release wrote: no new tables, no new columns, version 1.
    const manifestFile = path.join(dir, 'manifest.json')
    const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8')) as { version: number; tables: Record<string, number> }
    assert.equal(manifest.version, 6, 'this release writes version 6')
    const added: Record<string, string[]> = {
      packs: ['hidden_at', 'revision', 'downloads', 'short_id', 'followers'], versions: ['yanked_at', 'downloads', 'short_id'], users: ['disabled_at'], api_tokens: ['scope'],
      files: ['pack_kind', 'min_format', 'min_format_minor', 'max_format', 'max_format_minor'],
    }
    for (const [table, columns] of Object.entries(added)) {
      const file = path.join(dir, 'tables', `${table}.jsonl`)
      const rows = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
      for (const row of rows) for (const column of columns) delete row[column]
      fs.writeFileSync(file, rows.map((row) => JSON.stringify(row) + '\n').join(''))
    }
    for (const table of [...TABLES_SINCE_VERSION_2, ...TABLES_SINCE_VERSION_3, ...TABLES_SINCE_VERSION_4, ...TABLES_SINCE_VERSION_5, ...TABLES_SINCE_VERSION_6]) {
      fs.rmSync(path.join(dir, 'tables', `${table}.jsonl`))
      delete manifest.tables[table]
    }
    manifest.version = 1
    fs.writeFileSync(manifestFile, JSON.stringify(manifest))

    const target = embeddedBackend()
    assert.match(await cli(['import', dir], target), /every file's SHA-256 matched/)
    const after = await snapshot(target)
    for (const table of TABLES) {
      // Archive claims are made again on import from the versions (each archive's first publishing pack): the
      // held claims of deleted packs have no version left to be rebuilt from. Staff's permits are new.
      const expected = table === 'archive_claims' ? before_.rows[table]!.filter((row) => (JSON.parse(row) as { held_until: string | null }).held_until === null).length
        : [...TABLES_SINCE_VERSION_2, ...TABLES_SINCE_VERSION_3, ...TABLES_SINCE_VERSION_4, ...TABLES_SINCE_VERSION_5, ...TABLES_SINCE_VERSION_6].includes(table as never) ? 0 : before_.rows[table]!.length
      assert.equal(after.rows[table]!.length, expected, `${table}: ${expected} rows`)
    }
    assert.deepEqual(after.files, before_.files)
    const rows = (table: string) => after.rows[table]!.map((row) => JSON.parse(row) as Record<string, unknown>)
    for (const pack of rows('packs')) assert.deepEqual([pack.hidden_at, Number(pack.revision), Number(pack.downloads)], [null, 1, 0])
    for (const version of rows('versions')) assert.deepEqual([version.yanked_at, Number(version.downloads)], [null, 0])
    // Short ids came later still: the import gives every pack and version one.
    for (const row of [...rows('packs'), ...rows('versions')]) assert.match(String(row.short_id), /^[0-9A-Za-z]{8}$/)
    for (const user of rows('users')) assert.equal(user.disabled_at, null)
    for (const token of rows('api_tokens')) assert.equal(token.scope, 'full', 'tokens from before reaches are full access')
    for (const file of rows('files')) assert.deepEqual([file.pack_kind, file.min_format, file.max_format], [null, null, null])

    // A version this release does not know is refused in one line.
    manifest.version = 7
    fs.writeFileSync(manifestFile, JSON.stringify(manifest))
    assertRefused(await runCli(['import', dir], undefined, embeddedBackend().env),
      `${dir} is a packs export of version 7; this release imports versions 1, 2, 3, 4, 5, 6 (a newer export needs a newer release)`)
  })

  test('export refuses a directory that is not empty', async () => {
    const dir = newExportDir()
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, 'something'), 'x')
    const result = await runCli(['export', dir], undefined, source.env)
    assert.equal(result.code, 1)
    assert.match(result.stderr, /is not empty/)
  })
})
