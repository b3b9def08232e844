// Backups that restore: `packs backup <dir>` run as a real
// process (`node bin/packs.js`, what `npx packs` runs) while the server keeps
// running on the site, then `packs restore <dir>` into a new, empty site of
// the same combination: SQLite + disk (SQLite's online backup), or PostgreSQL
// + S3 (pg_dump and pg_restore, files through the S3 API, no AWS CLI). Every
// row of every table (the migrations' own and SQLite's search index
// included), order aside, and the SHA-256 of every stored object must be the
// same, and the restored site must serve the same bytes. A backup holds the
// site secret: 0700 and 0600 even under umask 0. Damaged backups,
// non-empty targets and databases holding another application's tables are
// refused in one line.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { Readable } from 'node:stream'
import { sql } from 'kysely'
import { migrateToLatest, openDatabase } from '../../src/db/index.js'
import { backupSite, type BackupReport } from '../../src/maintenance/backup.js'
import { openFileStore } from '../../src/storage/index.js'
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../helpers/database.js'
import { addPendingUpload, seedDemoSite, type DemoSite } from '../helpers/demo.js'
import { datapack, png } from '../helpers/fixtures.js'
import { runCli, spawnCli, startServer, suiteBackends, tempDataDir, type CliResult, type RunningServer, type SuiteBackends } from '../helpers/server.js'
import { sha256Of, sortedRows } from '../helpers/site-contents.js'
import { tempDir } from '../helpers/temp.js'

interface Site {
  env: Record<string, string>
  databaseUrl: string
  storageUrl: string
}

const released: SuiteBackends[] = []

const dropLater: TestDatabase[] = []

/**
 * A new, empty site of this run's combination: a data directory (no SQLite file yet), and on the scaled one a
 * PostgreSQL database, a bucket and a Redis database. The database is migrated, as a server or the CLI leaves
 * it, or with `blank` as CREATE DATABASE leaves it.
 */
async function newSite(options: { blank?: boolean } = {}): Promise<Site> {
  const backends = await suiteBackends()
  released.push(backends)
  const dataDir = tempDataDir()
  const site: Site = {
    env: { PACKS_DATA_DIR: dataDir, ...backends.env },
    databaseUrl: backends.databaseUrl(dataDir),
    storageUrl: backends.bucket?.storageUrl ?? `file:${path.join(dataDir, 'files')}`,
  }
  if (options.blank && TEST_DATABASE_URL) {
    const blank = await createTestDatabase()
    dropLater.push(blank)
    site.env.DATABASE_URL = site.databaseUrl = blank.url!
  }
  return site
}

interface Snapshot {
  /** Every table, the migrations' own included: its rows as sorted JSON lines. */
  rows: Record<string, string[]>
  /** Every object in the store: its SHA-256. */
  files: Record<string, string>
}

/** Read straight from the backends, not through Packs' queries. */
async function snapshot(site: Site): Promise<Snapshot> {
  const db = await openDatabase(site.databaseUrl)
  const store = await openFileStore(site.storageUrl)
  try {
    const rows: Record<string, string[]> = {}
    for (const table of await db.introspection.getTables({ withInternalKyselyTables: true })) rows[table.name] = await sortedRows(db, table.name)
    const files: Record<string, string> = {}
    for await (const object of store.list()) files[object.key] = await sha256Of(await store.get(object.key))
    return { rows, files }
  } finally {
    await store.close()
    await db.destroy()
  }
}

/** The files a backup directory holds, relative to it. */
function entries(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort()
}

/** Polls `condition` (a bound for a loaded machine, not a wait). */
async function waitFor(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

function refused(result: CliResult, line: RegExp): void {
  assert.equal(result.code, 1, `exit 1 expected; stdout: ${result.stdout} stderr: ${result.stderr}`)
  assert.match(result.stderr, line)
  assert.equal(result.stderr.split('\n').filter(Boolean).length, 1, `one line: ${result.stderr}`)
}

/** `packs <args>` as a process on `site`. */
function packs(args: string[], site: Site): Promise<CliResult> {
  return runCli(args, undefined, { ...site.env, PACKS_MASTER_PASSWORD: undefined }, { process: true })
}

/** The latest version's archive of `pack`, checked against the update-check's SHA-256; `counted`: with download=1. */
async function download(server: RunningServer, demo: DemoSite, pack: string, counted = false): Promise<Buffer> {
  const [namespace, packId] = pack.split(':')
  const latest = await fetch(`${server.url}/api/packs/${namespace}/${packId}/latest`, { headers: demo.creator.headers })
  assert.equal(latest.status, 200, await latest.clone().text())
  const { download_url: url, sha256: expected } = (await latest.json()) as { download_url: string; sha256: string }
  assert.match(url, /\?download=1$/)
  const file = await fetch(counted ? url : url.replace(/\?download=1$/, ''), { headers: demo.creator.headers })
  assert.equal(file.status, 200)
  const bytes = Buffer.from(await file.arrayBuffer())
  assert.equal(createHash('sha256').update(bytes).digest('hex'), expected)
  return bytes
}

describe('packs backup of a running site, and packs restore', () => {
  let source: Site
  let server: RunningServer
  let demo: DemoSite
  let backupDir: string
  let backupOutput: CliResult
  let before_: Snapshot
  let downloads: Map<string, Buffer>

  const newBackupDir = () => path.join(tempDir('packs-backup-'), 'site')

  before(async () => {
    source = await newSite()
    server = await startServer({ env: source.env, dataDir: source.env.PACKS_DATA_DIR })
    demo = await seedDemoSite(server)
    // A pending upload that never reached a pack, beside the published thumbnails, media and versions.
    await addPendingUpload(server, demo.creator)
    // A team: staff joins the creator's first pack as a maintainer and is offered its ownership (still open).
    const team = `${server.url}/api/packs/${demo.packs[0]!.replace(':', '/')}`
    const teamCall = async (url: string, headers: Record<string, string>, body?: object) => {
      const res = await fetch(url, { method: 'POST', headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}) })
      assert.ok(res.ok, `${url}: ${res.status} ${await res.text()}`)
    }
    await teamCall(`${team}/team/`, demo.creator.headers, { username: demo.staff.username, role: 'maintainer' })
    await teamCall(`${team}/team/accept/`, demo.staff.headers)
    await teamCall(`${team}/transfer/`, demo.creator.headers, { username: demo.staff.username })
    // One counted download (download_seen and the counters), written in a batch within 5 s: waited for, so
    // the site stands still from here on. The other downloads do not count (no download=1).
    downloads = new Map()
    for (const [index, pack] of demo.packs.entries()) downloads.set(pack, await download(server, demo, pack, index === 0))
    await waitFor(async () => (await snapshot(source)).rows.download_seen!.length > 0, 'the counted download is written')

    before_ = await snapshot(source)
    backupDir = newBackupDir()
    // However permissive the umask, a backup holds the site secret and every password hash. The child inherits it.
    const umask = process.umask(0)
    try {
      backupOutput = await spawnCli(['backup', backupDir], server.env).result
    } finally {
      process.umask(umask)
    }
    assert.equal(backupOutput.code, 0, backupOutput.stderr)
  })

  after(async () => {
    await server?.stop()
    for (const backends of released) await backends.release()
    for (const database of dropLater) await database.drop()
  })

  test('the site has users, packs, versions, thumbnails, media, a team, an ownership offer and a pending upload to back up', () => {
    for (const table of ['users', 'api_tokens', 'packs', 'versions', 'pack_media', 'uploads', 'files', 'drafts', 'settings', 'audit_log', 'download_seen', 'pack_members', 'pack_transfers']) {
      assert.ok(before_.rows[table]!.length > 0, `${table} has rows`)
    }
    assert.ok(Object.keys(before_.files).length >= 13, `${Object.keys(before_.files).length} stored files`)
  })

  test('the backup says what it holds, and is readable by its owner only: 0700 directories, 0600 files, under umask 0', () => {
    assert.match(backupOutput.stdout, new RegExp(`^backed up 2 users, ${demo.packs.length} packs, \\d+ versions, \\d+ files: the (SQLite database|PostgreSQL dump) \\(\\d+ bytes\\) and ${Object.keys(before_.files).length} stored files \\(\\d+ bytes\\) to ${backupDir}\\n$`))
    assert.equal(backupOutput.stderr, '')
    const names = entries(backupDir)
    const databaseFile = source.databaseUrl.startsWith('sqlite:') ? 'packs.db' : 'packs.dump'
    assert.deepEqual(names, ['files', ...Object.keys(before_.files).map((key) => path.join('files', key)), 'manifest.json', databaseFile].sort())
    assert.equal(fs.statSync(backupDir).mode & 0o777, 0o700)
    for (const name of names) {
      const stats = fs.statSync(path.join(backupDir, name))
      assert.equal(stats.mode & 0o777, stats.isDirectory() ? 0o700 : 0o600, `${name} is ${(stats.mode & 0o777).toString(8)}`)
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(backupDir, 'manifest.json'), 'utf8')) as { files: Record<string, { sha256: string }>; problems: string[] }
    assert.deepEqual(Object.fromEntries(Object.entries(manifest.files).map(([key, file]) => [key, file.sha256])), before_.files)
    assert.deepEqual(manifest.problems, [])
  })

  test('the server kept running and serving while the backup ran, and the backup changed nothing on the site', async () => {
    assert.equal(server.child.exitCode, null)
    const health = await fetch(`${server.url}/healthz`)
    assert.equal(health.status, 200)
    assert.deepEqual(await snapshot(source), before_)
  })

  test('restore into a new, empty site: the same rows in every table, the same SHA-256 for every file, the same downloads', async () => {
    const target = await newSite()
    const restored = await packs(['restore', backupDir], target)
    assert.equal(restored.code, 0, restored.stderr)
    assert.match(restored.stdout, new RegExp(`^restored 2 users, ${demo.packs.length} packs, .* and ${Object.keys(before_.files).length} stored files \\(\\d+ bytes\\) from ${backupDir}; every SHA-256 matched\\n$`))
    assert.deepEqual(await snapshot(target), before_)

    const second = await startServer({ env: target.env, dataDir: target.env.PACKS_DATA_DIR })
    try {
      for (const pack of demo.packs) assert.ok((await download(second, demo, pack)).equals(downloads.get(pack)!), `${pack} downloads the same bytes`)
      const login = await fetch(`${second.url}/login/`, {
        method: 'POST',
        headers: { ...demo.staff.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ username: demo.staff.username, password: demo.staff.password }),
      })
      assert.equal(login.status, 200, 'passwords work on the restored site')
    } finally {
      await second.stop()
    }
  })

  test('restore refuses a database that holds a site or that a server still uses, and a store that holds files of another', async () => {
    refused(await packs(['restore', backupDir], source), /^packs: the target database is not empty \(users has rows\); restore into a new, empty database\n$/)

    // A server started on an empty site: no rows yet, but it would write under the restore's feet.
    const busy = await newSite()
    const running = await startServer({ env: busy.env, dataDir: busy.env.PACKS_DATA_DIR })
    try {
      refused(await packs(['restore', backupDir], busy), /^packs: .* \(a server still running on it\?\): stop the servers before restoring\n$/)
    } finally {
      await running.stop()
    }

    const target = await newSite()
    const store = await openFileStore(target.storageUrl)
    try {
      await store.put('foreign-object', Readable.from([Buffer.from('not from this backup')]))
    } finally {
      await store.close()
    }
    refused(await packs(['restore', backupDir], target),
      /^packs: the target store is not empty \(it holds foreign-object, which is not in this backup\); restore into an empty directory or bucket\n$/)
    const after = await snapshot(target)
    assert.deepEqual(Object.keys(after.files), ['foreign-object'])
    assert.equal(after.rows.users?.length ?? 0, 0)
  })

  test('restore refuses a database holding tables that are not Packs\' (another application\'s users and sessions), naming them and touching nothing', async () => {
    const postgres = !source.databaseUrl.startsWith('sqlite:')
    /** Another application's tables (schema.name: in a schema of its own), with a row each. */
    const foreignTables = async (site: Site, names: string[]) => {
      const db = await openDatabase(site.databaseUrl)
      try {
        for (const name of names) {
          await sql`create table ${sql.raw(name)} (id integer primary key, name text not null)`.execute(db)
          await sql`insert into ${sql.raw(name)} (id, name) values (1, ${`row of ${name}`})`.execute(db)
        }
      } finally {
        await db.destroy()
      }
    }
    const foreignRows = async (site: Site, names: string[]) => {
      const db = await openDatabase(site.databaseUrl)
      try {
        const rows: Record<string, unknown[]> = {}
        for (const name of names) rows[name] = (await sql`select id, name from ${sql.raw(name)}`.execute(db)).rows
        return rows
      } finally {
        await db.destroy()
      }
    }
    const rowsOf = (names: string[]) => Object.fromEntries(names.map((name) => [name, [{ id: 1, name: `row of ${name}` }]]))

    // Another application's database: its users and sessions have Packs' table names, but no Packs migration
    // made them. The SQLite file holds them where the site's database would be.
    const other = await newSite({ blank: true })
    await foreignTables(other, ['users', 'sessions'])
    refused(await packs(['restore', backupDir], other),
      /^packs: the target database holds tables that are not Packs' \(sessions, users\), which the restore would drop or leave beside the site; nothing was changed: restore into a new, empty database\n$/)
    assert.deepEqual(await foreignRows(other, ['users', 'sessions']), rowsOf(['users', 'sessions']))
    assert.deepEqual((await snapshot(other)).files, {}, 'no file was stored')
    const db = await openDatabase(other.databaseUrl)
    try {
      const tables = (await db.introspection.getTables({ withInternalKyselyTables: true })).map((table) => table.name).sort()
      assert.deepEqual(tables, ['sessions', 'users'], 'nothing of Packs was created')
    } finally {
      await db.destroy()
    }

    // A Packs site, still empty, beside one other table (and on PostgreSQL one in a schema of its own, though
    // it has a Packs table's name).
    const shared = await newSite()
    const migrated = await openDatabase(shared.databaseUrl)
    try {
      await migrateToLatest(migrated)
      if (postgres) await sql`create schema billing`.execute(migrated)
    } finally {
      await migrated.destroy()
    }
    const extra = postgres ? ['orders', 'billing.users'] : ['orders']
    await foreignTables(shared, extra)
    refused(await packs(['restore', backupDir], shared),
      new RegExp(`^packs: the target database holds ${postgres ? 'tables that are' : 'a table that is'} not Packs' \\(${postgres ? 'billing\\.users, orders' : 'orders'}\\), which the restore would drop or leave beside the site; nothing was changed: restore into a new, empty database\n$`))
    assert.deepEqual(await foreignRows(shared, extra), rowsOf(extra))
    const after = await snapshot(shared)
    assert.deepEqual(after.files, {})
    assert.equal(after.rows.users?.length ?? 0, 0)
  })

  test('a file changed in the backup fails the restore with one line naming it, and leaves the target empty', async () => {
    const damaged = newBackupDir()
    fs.cpSync(backupDir, damaged, { recursive: true })
    const key = Object.keys(before_.files).sort()[3]!
    // The same size, one byte different: only its SHA-256 can tell.
    const file = path.join(damaged, 'files', key)
    const bytes = fs.readFileSync(file)
    const middle = bytes.length >> 1
    bytes[middle] = bytes[middle]! ^ 0xff
    fs.writeFileSync(file, bytes)
    const target = await newSite()
    refused(await packs(['restore', damaged], target),
      new RegExp(`^packs: files/${key}: SHA-256 [0-9a-f]{64} \\(${bytes.length} bytes\\) does not match the manifest's ${before_.files[key]} \\(${bytes.length} bytes\\): the backup is damaged, nothing was restored\\n$`))
    const after = await snapshot(target)
    assert.deepEqual(after.files, {}, 'the files written before the damaged one are removed again')
    assert.equal(after.rows.users?.length ?? 0, 0, 'no rows')

    // A changed database copy is refused before anything is written.
    fs.writeFileSync(file, fs.readFileSync(path.join(backupDir, 'files', key)))
    const databaseFile = fs.readdirSync(damaged).find((name) => name.startsWith('packs.'))!
    fs.appendFileSync(path.join(damaged, databaseFile), 'x')
    refused(await packs(['restore', damaged], target),
      new RegExp(`^packs: ${databaseFile.replace('.', '\\.')}: SHA-256 [0-9a-f]{64} \\(\\d+ bytes\\) does not match the manifest's [0-9a-f]{64} \\(\\d+ bytes\\): the backup is damaged, nothing was restored\\n$`))
    assert.deepEqual((await snapshot(target)).files, {})
  })

  test('help lists backup and restore', async () => {
    const help = await runCli(['help'])
    assert.match(help.stdout, /\n {2}packs backup <dir> +back up the running site/)
    assert.match(help.stdout, /\n {2}packs restore <dir> +restore a backup into this empty site/)
  })

  test('backup refuses a directory that is not empty, and restore one that is no backup', async () => {
    const dir = newBackupDir()
    fs.mkdirSync(dir)
    fs.writeFileSync(path.join(dir, 'something'), 'x')
    refused(await runCli(['backup', dir], server.env), /^packs: .* is not empty; back up into a new directory\n$/)
    assert.deepEqual(fs.readdirSync(dir), ['something'])
    refused(await runCli(['restore', dir], undefined, (await newSite()).env), /^packs: .* has no manifest\.json: not a finished packs backup\n$/)
  })

  test('a backup taken while packs are published and files uploaded restores to a consistent site', async () => {
    const json = { ...demo.creator.headers, 'content-type': 'application/json' }
    const upload = async (draft: string, kind: string, bytes: Buffer, name: string) => {
      const form = new FormData()
      form.set('kind', kind)
      form.set('draft_uuid', draft)
      form.set('file', new Blob([new Uint8Array(bytes)]), name)
      const res = await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers: demo.creator.headers, body: form })
      assert.equal(res.status, 200, await res.text())
    }
    let running = true
    let writes = 0
    const load = (async () => {
      for (let n = 0; running; n++) {
        const draft = randomUUID()
        await upload(draft, 'thumbnail', png(8, 8, [n % 256, 40, 90]), 'thumbnail.png')
        await upload(draft, 'version', await datapack(48), `load-${n}.zip`)
        const saved = await fetch(`${server.url}/api/draft/`, { method: 'POST', headers: json, body: JSON.stringify({ draft, data: { title: `Load ${n}`, version_name: '1' } }) })
        assert.equal(saved.status, 200, await saved.text())
        const published = await fetch(`${server.url}/api/draft/publish/`, { method: 'POST', headers: json, body: JSON.stringify({ draft }) })
        assert.equal(published.status, 201, await published.text())
        writes++
      }
    })()
    try {
      await waitFor(async () => writes > 0, 'the load is under way')
      const dir = newBackupDir()
      const atStart = writes
      const backup = await spawnCli(['backup', dir], server.env).result
      assert.ok(writes > atStart, 'packs were published while the backup ran')
      running = false
      await load
      assert.equal(backup.code, 0, backup.stderr)

      const target = await newSite()
      const restored = await packs(['restore', dir], target)
      assert.equal(restored.code, 0, restored.stderr)
      // Every file a row names is there with the row's SHA-256, and nothing else is: rows and files of one moment.
      const after = await snapshot(target)
      const named = Object.fromEntries(after.rows.files!.map((line) => JSON.parse(line) as { storage_key: string; sha256: string })
        .map((row) => [row.storage_key, row.sha256]))
      assert.deepEqual(after.files, named)
      assert.ok(after.rows.packs!.length > before_.rows.packs!.length, 'the backup holds packs published under load')
      const doctor = await runCli(['doctor', '--min-age', '0'], undefined, { ...target.env, PACKS_MASTER_PASSWORD: undefined })
      assert.equal(doctor.code, 0, `the restored site is consistent: ${doctor.stdout}${doctor.stderr}`)
    } finally {
      running = false
      await load.catch(() => {})
    }
  })

  test('a pack deleted between the database copy and the file copy: the database is taken again, so rows and files are of one moment', async () => {
    // One of the demo's packs goes while its files are being copied: its thumbnail, media and versions leave the store.
    const [namespace, packId] = demo.packs[0]!.split(':')
    const beforeDeletion = await snapshot(source)
    let deletions = 0
    const dir = newBackupDir()
    const store = await openFileStore(source.storageUrl)
    let report: BackupReport | undefined
    try {
      report = await backupSite(source.databaseUrl, store, dir, {
        afterSnapshot: async () => {
          if (deletions++ > 0) return
          const deleted = await fetch(`${server.url}/api/packs/${namespace}/${packId}/`, { method: 'DELETE', headers: demo.creator.headers })
          assert.equal(deleted.status, 204, await deleted.text())
        },
      })
    } finally {
      await store.close()
    }
    assert.equal(deletions, 2, 'a second snapshot was taken')
    assert.deepEqual(report!.problems, [])
    const now = await snapshot(source)
    assert.ok(Object.keys(now.files).length < Object.keys(beforeDeletion.files).length, 'the pack\'s files are gone from the site')

    const target = await newSite({ blank: true })
    const restored = await packs(['restore', dir], target)
    assert.equal(restored.code, 0, restored.stderr)
    const after = await snapshot(target)
    assert.deepEqual(after.files, now.files, 'exactly the files of the site after the deletion')
    assert.equal(after.rows.packs!.length, beforeDeletion.rows.packs!.length - 1)
    const doctor = await runCli(['doctor', '--min-age', '0'], undefined, { ...target.env, PACKS_MASTER_PASSWORD: undefined })
    assert.equal(doctor.code, 0, `the restored site is consistent: ${doctor.stdout}${doctor.stderr}`)
  })

  test('a file already lost from the store: the backup is written without it, names it on stderr and exits 1', async () => {
    // Last: it damages the source site. Bytes gone behind the site's back (a disk error, an object deleted by hand).
    const [lost] = Object.keys((await snapshot(source)).files).sort()
    const store = await openFileStore(source.storageUrl)
    try {
      await store.delete(lost!)
    } finally {
      await store.close()
    }
    const dir = newBackupDir()
    const result = await runCli(['backup', dir], server.env)
    assert.equal(result.code, 1)
    assert.match(result.stdout, /^backed up /)
    assert.deepEqual(result.stderr.split('\n').filter(Boolean), [
      `packs: warning: file ${lost}: the database names it (${/names it \((\d+) bytes\)/.exec(result.stderr)?.[1]} bytes) but the store has no such object; the backup has its rows without its bytes`,
      'packs: the backup is written, but 1 file was not as the database says (packs doctor reports the site\'s side)',
    ])
    const target = await newSite()
    const restored = await packs(['restore', dir], target)
    assert.equal(restored.code, 0, restored.stderr)
    assert.match(restored.stderr, new RegExp(`^packs: warning: when it was backed up, file ${lost}: the database names it`))
    assert.ok(!(lost! in (await snapshot(target)).files))
  })
})
