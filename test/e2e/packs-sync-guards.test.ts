// packs-sync against a site that does not play fair: a loopback Packs site of
// the test's own (./packs-sync-fake-site.ts), signed as the protocol says,
// bent one way per test: an expired or older answer, an answer to another
// question or without the request's digest, a retired key, another pack
// claiming a file, escape sequences in its text, a body without end, a
// mistyped or moved site, and links planted in the folder. The client runs as
// a process, as a player runs it. (The same client against the real server:
// packs-sync.test.ts.)
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { freePort } from '../helpers/server.js'
import { tempDir } from '../helpers/temp.js'
import { FakeSite, json, makeKey, type FakeArchive } from './packs-sync-fake-site.js'
import { failed, readLockFile, runSync } from './packs-sync-run.js'

const PASSWORD = 'sync-site-password'
const sites: FakeSite[] = []
after(() => { for (const site of sites) site.close() })

const archive = (namespace: string, pack_id: string, version: string, daysAgo: number): FakeArchive => ({
  namespace, pack_id, version, created_at: new Date(Date.now() - daysAgo * 86_400_000).toISOString(),
  bytes: Buffer.from(`PK ${namespace}:${pack_id} ${version} ${'x'.repeat(200)}`),
})

/** A site with one pack, mossy 1.0.0 and its newer 1.1.0 (which it also knows as installed), and a folder holding 1.0.0. */
async function setUp(): Promise<{ site: FakeSite; url: string; folder: string; old: FakeArchive; newer: FakeArchive }> {
  const site = new FakeSite(PASSWORD)
  sites.push(site)
  const old = archive('steve', 'mossy-dungeons', '1.0.0', 10)
  const newer = archive('steve', 'mossy-dungeons', '1.1.0', 1)
  site.publish(old, newer)
  site.publish(newer, newer)
  const url = await site.listen()
  const folder = tempDir('packs-sync-guard-')
  fs.writeFileSync(path.join(folder, 'mossy.zip'), old.bytes)
  return { site, url, folder, old, newer }
}

const lockPath = (folder: string) => path.join(folder, '.packs-sync.json')

describe('packs-sync against a site that does not play fair', { timeout: 120_000 }, () => {
  test('a fresh answer about the question asked is accepted; an expired one, one about another question or not covering the request\'s digest is refused', async () => {
    const { site, url, folder, old, newer } = await setUp()
    const args = ['--site', url, '--pack-format', '57']

    site.signing = { createdOffset: -7200, ttl: 3600, omitRequestDigest: false }
    failed(await runSync(folder, args), /expired at/)
    assert.equal(fs.existsSync(lockPath(folder)), false, 'nothing bound on a refused first run')

    // The answer is signed as the answer to another body (another list of hashes, or another game).
    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false, requestDigest: `sha-256=:${createHash('sha256').update('{"hashes":[],"pack_format":48}').digest('base64')}:` }
    failed(await runSync(folder, args), /answer does not match its signature .*another question/)
    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false, query: '?pack_format=48' }
    failed(await runSync(folder, args), /does not match its signature/)
    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: true }
    failed(await runSync(folder, args), /does not cover exactly what packs-sync asked \(missing "content-digest";req\)/)
    site.signing = { createdOffset: 600, ttl: 3600, omitRequestDigest: false }
    failed(await runSync(folder, args), /signed in the future/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), old.bytes)

    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false }
    const good = await runSync(folder, args)
    assert.equal(good.code, 0, good.stderr)
    assert.match(good.stdout, /pinned the site's signing key [0-9a-f]{16}/)
    assert.match(good.stdout, /mossy\.zip: steve:mossy-dungeons 1\.0\.0 -> 1\.1\.0, updated/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), newer.bytes)
    const lock = readLockFile(folder)
    const accepted = lock.signed_at?.['steve:mossy-dungeons']
    assert.ok(accepted !== undefined && Math.abs(accepted - Date.now() / 1000) < 60, 'the time of the accepted answer is kept per pack')

    // A valid, unexpired answer signed before the one accepted (a replay, or a site's cache gone back): refused.
    site.signing = { createdOffset: -600, ttl: 3600, omitRequestDigest: false }
    failed(await runSync(folder, args), /answer about steve:mossy-dungeons was signed at .* before one already accepted/)
    // A body changed on the way no longer matches its Content-Digest.
    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false }
    site.tamper = (body) => Buffer.from(body.toString('utf8').replace('"1.1.0"', '"1.1.1"'))
    failed(await runSync(folder, args), /does not match its Content-Digest/)
  })

  test('a retired key is refused, the pinned one too, and stays refused when a later key list forgets it', async () => {
    const { site, url, folder } = await setUp()
    const args = ['--site', url, '--pack-format', '57', '--dry-run']
    const first = await runSync(folder, args)
    assert.equal(first.code, 0, first.stderr)
    const oldKey = site.keys[0]!
    assert.equal(readLockFile(folder).key?.id, oldKey.id)

    // Retired at once; something still signs with it (a stolen key, or a replayed answer).
    const newKey = site.rotate(0)
    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false, keyId: oldKey.id }
    failed(await runSync(folder, args), new RegExp(`answer is signed by key ${oldKey.id}, which was retired at `))
    assert.ok(readLockFile(folder).retired_keys?.[oldKey.id], 'the retirement is kept in the lock')
    assert.equal(readLockFile(folder).key?.id, newKey.id, 'the pin followed the endorsement to the new key')
    const fresh = tempDir('packs-sync-guard-')
    fs.copyFileSync(path.join(folder, 'mossy.zip'), path.join(fresh, 'mossy.zip'))
    failed(await runSync(fresh, args), new RegExp(`signed by key ${oldKey.id}, which was retired`))

    // The site's state rolled back (or an old key list replayed): the old key current again, the new one gone.
    site.keys = [{ ...oldKey, expires_at: null }]
    failed(await runSync(folder, args), new RegExp(`key list is signed by key ${oldKey.id}, which was retired at `))

    // The real site again, signing with its new key.
    site.keys = [oldKey, newKey]
    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false }
    const followed = await runSync(folder, args)
    assert.equal(followed.code, 0, followed.stderr)
    // A client that never met the old key's retirement follows the endorsement, and says so.
    const late = tempDir('packs-sync-guard-')
    fs.writeFileSync(path.join(late, '.packs-sync.json'), JSON.stringify({ site: url, key: { id: oldKey.id, public_key: oldKey.public_key }, packs: {} }))
    const told = await runSync(late, args)
    assert.equal(told.code, 0, told.stderr)
    assert.match(told.stdout, new RegExp(`now trusting the site's signing key ${newKey.id} \\(endorsed by the pinned ${oldKey.id}\\)`))
  })

  test('a key rotated with a grace period: answers by either key are accepted until the old one expires', async () => {
    const { site, url, folder } = await setUp()
    const args = ['--site', url, '--pack-format', '57', '--dry-run']
    assert.equal((await runSync(folder, args)).code, 0)
    const oldKey = site.keys[0]!
    site.rotate(3600)
    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false, keyId: oldKey.id }
    const run = await runSync(folder, args)
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /now trusting/)
    // A key the pin never endorsed signs the key list: refused without --trust-new-key.
    site.keys = [makeKey()]
    site.signing = { createdOffset: 0, ttl: 3600, omitRequestDigest: false }
    failed(await runSync(folder, args), /signing key changed from [0-9a-f]{16} to [0-9a-f]{16} without the old key vouching for it.*--trust-new-key/)
  })

  test('a file stays with the pack the lock remembers: another pack\'s claim is refused unless --allow-pack-change', async () => {
    const { site, url, folder, newer } = await setUp()
    const args = ['--site', url, '--pack-format', '57']
    assert.equal((await runSync(folder, args)).code, 0)
    assert.equal(readLockFile(folder).packs['mossy.zip']?.pack_id, 'mossy-dungeons')

    // The site now says the archive is someone else's, with a newer version of that pack.
    const other = archive('mallory', 'mossy-dungeons-plus', '9.0.0', 0)
    site.publish({ ...newer, namespace: 'mallory', pack_id: 'mossy-dungeons-plus' }, other)
    const refused = await runSync(folder, args)
    assert.equal(refused.code, 1, refused.stdout)
    assert.deepEqual(refused.stderr.trim().split('\n'), ['mossy.zip: packs-sync knows it as steve:mossy-dungeons, but the site now names mallory:mossy-dungeons-plus; left alone (--allow-pack-change accepts it)'])
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), newer.bytes)
    assert.equal(readLockFile(folder).packs['mossy.zip']?.namespace, 'steve')

    const allowed = await runSync(folder, [...args, '--allow-pack-change'])
    assert.equal(allowed.code, 0, allowed.stderr)
    assert.match(allowed.stdout, /mossy\.zip: now mallory:mossy-dungeons-plus, was steve:mossy-dungeons/)
    assert.deepEqual(fs.readFileSync(path.join(folder, 'mossy.zip')), other.bytes)
    assert.equal(readLockFile(folder).packs['mossy.zip']?.namespace, 'mallory')
  })

  test('text from the site reaches the terminal escaped: no control or bidi character gets through', async () => {
    const { site, url, folder, old } = await setUp()
    const evil = '\u001b]0;owned\u0007\u001b[2J\u009b31m\u202egnp.exe\u0085'
    site.publish(old, { ...archive('steve', 'mossy-dungeons', `2.0${evil}`, 0) })
    const run = await runSync(folder, ['--site', url, '--pack-format', '57', '--dry-run'])
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, /-> 2\.0\\u\{1b\}\]0;owned\\u\{7\}\\u\{1b\}\[2J\\u\{9b\}31m\\u\{202e\}gnp\.exe\\u\{85\} \(dry run/)
    site.override = (req, res) => {
      json(res, 403, { detail: `go away${evil}` })
      return true
    }
    const refused = await runSync(folder, ['--site', url, '--pack-format', '57'])
    failed(refused, /403 go away\\u\{1b\}\]0;owned/)
    for (const text of [run.stdout, run.stderr, refused.stdout, refused.stderr]) {
      assert.doesNotMatch(text, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    }
  })

  test('an answer without end is cut off as it arrives: a 700 MiB body costs a few MiB, and a declared one nothing', async (t) => {
    const { site, url, folder } = await setUp()
    // What the client costs without reading anything large: the site refuses at once.
    site.override = (_req, res) => {
      json(res, 403, { detail: 'no' })
      return true
    }
    const baseline = await runSync(folder, ['--site', url, '--pack-format', '57'], { measure: true })
    assert.equal(baseline.code, 1)
    assert.ok(baseline.maxRssKiB! > 0)

    const chunk = Buffer.alloc(1024 * 1024, 0x20)
    let sent = 0
    site.override = (_req, res) => {
      // No Content-Length: the client learns the size only by reading.
      res.writeHead(200, { 'content-type': 'application/json' })
      sent = 0
      const pump = () => {
        while (sent < 700) {
          sent++
          if (!res.write(chunk)) return void res.once('drain', pump)
        }
        res.end()
      }
      res.on('close', () => { sent = 700 })
      pump()
      return true
    }
    const huge = await runSync(folder, ['--site', url, '--pack-format', '57'], { measure: true })
    failed(huge, /is larger than packs-sync accepts \(more than \d+ bytes\): stopped reading/)
    const grewMiB = (huge.maxRssKiB! - baseline.maxRssKiB!) / 1024
    t.diagnostic(`peak RSS ${huge.maxRssKiB} KiB, ${grewMiB.toFixed(1)} MiB over a refused run's`)
    assert.ok(grewMiB < 48, `peak memory grew by ${grewMiB.toFixed(1)} MiB over a refused run (${baseline.maxRssKiB} KiB)`)

    site.override = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(700 * 1024 * 1024) })
      res.write(chunk)
      return true
    }
    failed(await runSync(folder, ['--site', url, '--pack-format', '57']), /is larger than packs-sync accepts \(734003200 bytes, at most \d+\)/)
  })

  test('a link planted at the lock\'s temporary name or at the lock is not followed: the file it points at stays as it was', async () => {
    const { url, folder } = await setUp()
    const outside = path.join(tempDir('packs-sync-outside-'), 'precious.txt')
    fs.writeFileSync(outside, 'precious\n')
    const run = await runSync(folder, ['--site', url, '--pack-format', '57', '--dry-run'], {
      // The temporary name is the lock's name and the process id: planted as soon as the process exists.
      spawned: (child) => fs.symlinkSync(outside, path.join(folder, `.packs-sync.json.${child.pid}.tmp`)),
    })
    assert.equal(run.code, 0, run.stderr)
    assert.equal(fs.readFileSync(outside, 'utf8'), 'precious\n')
    assert.ok(fs.lstatSync(lockPath(folder)).isFile())
    assert.equal(readLockFile(folder).site, url)
    assert.deepEqual(fs.readdirSync(folder).filter((name) => name.endsWith('.tmp')), [])

    fs.rmSync(lockPath(folder))
    fs.writeFileSync(outside, JSON.stringify({ site: url, key: null, packs: {} }))
    const before = fs.readFileSync(outside)
    fs.symlinkSync(outside, lockPath(folder))
    failed(await runSync(folder, ['--site', url, '--pack-format', '57', '--dry-run']), /\.packs-sync\.json is a symbolic link: packs-sync does not follow it/)
    assert.deepEqual(fs.readFileSync(outside), before)
    assert.ok(fs.lstatSync(lockPath(folder)).isSymbolicLink())
  })

  test('a mistyped --site binds nothing; --rebind follows a moved site that still holds the pinned key', async () => {
    const { site, url, folder } = await setUp()
    // An empty folder and a site that is not there: nothing to check, and still nothing is bound.
    const empty = tempDir('packs-sync-guard-')
    failed(await runSync(empty, ['--site', `http://127.0.0.1:${await freePort()}`, '--pack-format', '57']), /cannot reach/)
    assert.deepEqual(fs.readdirSync(empty), [])
    // A typo that reaches some other web server.
    const other = http.createServer((_req, res) => { res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>') })
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', () => resolve()))
    try {
      failed(await runSync(folder, ['--site', `http://127.0.0.1:${(other.address() as { port: number }).port}`, '--pack-format', '57']), /refused GET \/api\/update-check\/keys\/: HTTP 404/)
    } finally {
      other.close()
    }
    assert.equal(fs.existsSync(lockPath(folder)), false)
    const bound = await runSync(empty, ['--site', url, '--pack-format', '57'])
    assert.equal(bound.code, 0, bound.stderr)
    assert.equal(readLockFile(empty).site, url, 'an empty folder is bound once the key list verified')

    assert.equal((await runSync(folder, ['--site', url, '--pack-format', '57', '--dry-run'])).code, 0)
    const pinned = readLockFile(folder).key!.id
    // The site moves to another URL (here: another port of the same site).
    const moved = await site.listen()
    failed(await runSync(folder, ['--site', moved, '--pack-format', '57']), new RegExp(`is kept in step with ${url}, not ${moved}; if the site moved there, run again with --rebind`))
    const rebound = await runSync(folder, ['--site', moved, '--pack-format', '57', '--rebind', '--dry-run'])
    assert.equal(rebound.code, 0, rebound.stderr)
    assert.match(rebound.stdout, new RegExp(`now follows ${moved} \\(was ${url}\\)`))
    assert.equal(readLockFile(folder).site, moved)
    assert.equal(readLockFile(folder).key!.id, pinned, 'the pinned key is kept')

    // Another site at the new URL, without the pinned key: --rebind alone does not trust it.
    const impostor = new FakeSite(PASSWORD)
    sites.push(impostor)
    impostor.publish(archive('steve', 'mossy-dungeons', '1.0.0', 10), null)
    const impostorUrl = await impostor.listen()
    failed(await runSync(folder, ['--site', impostorUrl, '--pack-format', '57', '--rebind']), /signing key changed from [0-9a-f]{16} to [0-9a-f]{16} without the old key vouching for it/)
    assert.equal(readLockFile(folder).site, moved, 'a refused rebind binds nothing')
    const trusted = await runSync(folder, ['--site', impostorUrl, '--pack-format', '57', '--rebind', '--trust-new-key', '--dry-run'])
    assert.equal(trusted.code, 0, trusted.stderr)
    assert.equal(readLockFile(folder).key!.id, impostor.keys[0]!.id)
  })
})
