// makeSiteFilesPrivate (src/maintenance/private-files.ts), which server start-up runs on a site made before
// its files were private: what it changes, and what it must leave alone (a symbolic link's target, the
// parents of a database or store configured outside the data directory, a store already private).
// test/e2e/private-files.test.ts starts real servers on such a site.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describeSiteFilesTightened, makeSiteFilesPrivate } from '../../src/maintenance/private-files.js'
import { tempDir } from '../helpers/temp.js'

const mode = (file: string) => fs.lstatSync(file).mode & 0o7777

let umask: number
before(() => { umask = process.umask(0o022) })
after(() => { process.umask(umask) })

/** A directory tree made 0755 / 0644 (as an older release made them under umask 022). */
function looseTree(root: string, files: string[]): void {
  fs.mkdirSync(root, { recursive: true, mode: 0o755 })
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true, mode: 0o755 })
    fs.writeFileSync(path.join(root, file), 'x', { mode: 0o644 })
  }
}

describe('makeSiteFilesPrivate', () => {
  test('a loose site: the data directory, the database and its journals, the store and everything under it', () => {
    const dataDir = path.join(tempDir('packs-private-unit-'), 'data')
    looseTree(dataDir, ['packs.db', 'packs.db-wal', 'packs.db-shm', 'files/ab/abcdef', 'files/ab/abcdef.0f0e.partial', 'files/cd/cdef', 'notes.txt'])
    // The owner's own permissions are never widened: a read-only file stays read-only.
    fs.chmodSync(path.join(dataDir, 'files/cd/cdef'), 0o444)
    const config = { dataDir, databaseUrl: `sqlite:${path.join(dataDir, 'packs.db')}`, storageUrl: `file:${path.join(dataDir, 'files')}` }
    const result = makeSiteFilesPrivate(config)
    assert.deepEqual({ ...result, failed: [] }, { dataDir: 1, database: 3, files: 6, total: 10, failed: [], failedCount: 0 })
    assert.equal(mode(dataDir), 0o700)
    for (const file of ['packs.db', 'packs.db-wal', 'packs.db-shm', 'files/ab/abcdef', 'files/ab/abcdef.0f0e.partial']) assert.equal(mode(path.join(dataDir, file)), 0o600, file)
    for (const dir of ['files', 'files/ab', 'files/cd']) assert.equal(mode(path.join(dataDir, dir)), 0o700, dir)
    assert.equal(mode(path.join(dataDir, 'files/cd/cdef')), 0o400)
    // Not the site's: left as it is (the data directory, now 0700, keeps others out of it).
    assert.equal(mode(path.join(dataDir, 'notes.txt')), 0o644)

    const { info, warning } = describeSiteFilesTightened(result, config)
    assert.equal(warning, null)
    assert.deepEqual(info?.fields, { tightened: 10, dataDir: 1, database: 3, files: 6 })
    assert.equal(info?.message, `packs: made 10 paths private that other users of this machine could read (now 0700 directories, 0600 files): `
      + `the data directory ${dataDir}, 3 of the SQLite database ${path.join(dataDir, 'packs.db')} and its journals, 6 in the stored files ${path.join(dataDir, 'files')}`)

    const again = makeSiteFilesPrivate(config)
    assert.equal(again.total, 0)
    assert.deepEqual(describeSiteFilesTightened(again, config), { info: null, warning: null })
  })

  test('symbolic links are not followed under the store; a configured path that is a link is its target; parents elsewhere are left alone', () => {
    const base = tempDir('packs-private-unit-')
    fs.chmodSync(base, 0o755)
    const outside = path.join(base, 'outside.txt')
    fs.writeFileSync(outside, 'not the store\'s', { mode: 0o644 })
    const outsideDir = path.join(base, 'outside-dir')
    looseTree(outsideDir, ['inner.txt'])
    // A database and a store configured outside the data directory, under parents of their own.
    const elsewhere = path.join(base, 'elsewhere')
    looseTree(elsewhere, ['db/packs.db', 'real-store/ab/abc'])
    fs.symlinkSync(path.join(elsewhere, 'real-store'), path.join(elsewhere, 'store'))
    fs.symlinkSync(outside, path.join(elsewhere, 'real-store/ab/link'))
    fs.symlinkSync(outsideDir, path.join(elsewhere, 'real-store/dir-link'))
    const result = makeSiteFilesPrivate({
      dataDir: path.join(base, 'no-data-dir'),
      databaseUrl: `sqlite:${path.join(elsewhere, 'db/packs.db')}`,
      storageUrl: `file:${path.join(elsewhere, 'store')}`,
    })
    assert.equal(result.failedCount, 0)
    assert.equal(mode(path.join(elsewhere, 'db/packs.db')), 0o600)
    assert.equal(mode(path.join(elsewhere, 'real-store')), 0o700, 'the store a link points at')
    assert.equal(mode(path.join(elsewhere, 'real-store/ab/abc')), 0o600)
    assert.equal(mode(outside), 0o644, 'a link\'s target outside the store')
    assert.equal(mode(path.join(outsideDir, 'inner.txt')), 0o644, 'nothing under a linked directory')
    assert.equal(mode(outsideDir), 0o755)
    for (const parent of [base, elsewhere, path.join(elsewhere, 'db')]) assert.notEqual(mode(parent) & 0o077, 0, `${parent} is not the site's`)
    assert.equal(fs.existsSync(path.join(base, 'no-data-dir')), false, 'a data directory that is not there is not made')
  })

  test('a store whose directory is already private is not walked again; a loose one is, its directory last', () => {
    const dataDir = tempDir('packs-private-unit-')
    looseTree(path.join(dataDir, 'files'), ['ab/abc'])
    fs.chmodSync(path.join(dataDir, 'files'), 0o700)
    const config = { dataDir, databaseUrl: 'sqlite::memory:', storageUrl: `file:${path.join(dataDir, 'files')}` }
    assert.equal(makeSiteFilesPrivate(config).files, 0)
    assert.equal(mode(path.join(dataDir, 'files/ab/abc')), 0o644, 'unreachable for others behind the 0700 directory')
    fs.chmodSync(path.join(dataDir, 'files'), 0o755)
    assert.equal(makeSiteFilesPrivate(config).files, 3)
    assert.equal(mode(path.join(dataDir, 'files/ab/abc')), 0o600)
  })
})

describe('makeSiteFilesPrivate with PACKS_ACCEL_REDIRECT (nginx reads the stored files through their group)', () => {
  const accel = { accelRedirect: '/_packs_files/' }

  test('the store goes to its directory\'s group, which may pass and read; the data directory lets it pass; nothing else opens; off again, all private', () => {
    const dataDir = path.join(tempDir('packs-private-unit-'), 'data')
    looseTree(dataDir, ['packs.db', 'packs.db-wal', 'files/ab/abcdef', 'files/cd/cdef', 'notes.txt'])
    fs.chmodSync(path.join(dataDir, 'files/cd/cdef'), 0o444)
    fs.chmodSync(path.join(dataDir, 'files/ab'), 0o777)
    const base = { dataDir, databaseUrl: `sqlite:${path.join(dataDir, 'packs.db')}`, storageUrl: `file:${path.join(dataDir, 'files')}` }
    const config = { ...base, fileDelivery: accel }
    const result = makeSiteFilesPrivate(config)
    assert.deepEqual({ ...result, failed: [] }, { dataDir: 1, database: 2, files: 5, total: 8, failed: [], failedCount: 0 })
    assert.equal(mode(dataDir), 0o710, 'nginx passes through the data directory to the store inside it')
    for (const dir of ['files', 'files/ab', 'files/cd']) assert.equal(mode(path.join(dataDir, dir)), 0o710, dir)
    assert.equal(mode(path.join(dataDir, 'files/ab/abcdef')), 0o640)
    assert.equal(mode(path.join(dataDir, 'files/cd/cdef')), 0o440, 'the owner\'s permissions stay as they were')
    for (const file of ['packs.db', 'packs.db-wal']) assert.equal(mode(path.join(dataDir, file)), 0o600, file)
    assert.equal(mode(path.join(dataDir, 'notes.txt')), 0o644, 'not the site\'s')
    const { info } = describeSiteFilesTightened(result, config)
    assert.match(info!.message, /^packs: set 8 paths as PACKS_ACCEL_REDIRECT needs them \(nginx sends the stored files\): the store's group may pass through its directories \(0710\) and read its files \(0640\)/)
    assert.equal(makeSiteFilesPrivate(config).total, 0, 'a store already shared is not walked again')

    const off = makeSiteFilesPrivate(base)
    assert.deepEqual({ ...off, failed: [] }, { dataDir: 1, database: 0, files: 5, total: 6, failed: [], failedCount: 0 })
    assert.equal(mode(dataDir), 0o700)
    assert.equal(mode(path.join(dataDir, 'files/ab/abcdef')), 0o600)
    assert.equal(mode(path.join(dataDir, 'files')), 0o700)
  })

  test('a store that is not there yet is made, its group able to pass from the first start', () => {
    const dataDir = path.join(tempDir('packs-private-unit-'), 'data')
    const config = { dataDir, databaseUrl: `sqlite:${path.join(dataDir, 'packs.db')}`, storageUrl: `file:${path.join(dataDir, 'files')}`, fileDelivery: accel }
    makeSiteFilesPrivate(config)
    assert.equal(mode(dataDir), 0o710)
    assert.equal(mode(path.join(dataDir, 'files')), 0o710)
  })

  test('a store elsewhere: its own directory\'s group, given to everything in it; the data directory stays private', { skip: process.getuid?.() !== 0 && 'giving files to another group needs a member of it: runs as root (CI)' }, () => {
    const base = tempDir('packs-private-unit-')
    const dataDir = path.join(base, 'data')
    fs.mkdirSync(dataDir, { mode: 0o755 })
    const store = path.join(base, 'store')
    looseTree(store, ['ab/abc'])
    // The group an operator made for nginx (nogroup here), set on the store's directory.
    const group = 65534
    fs.chownSync(store, -1, group)
    const config = { dataDir, databaseUrl: 'sqlite::memory:', storageUrl: `file:${store}`, fileDelivery: accel }
    assert.equal(makeSiteFilesPrivate(config).failedCount, 0)
    assert.equal(mode(dataDir), 0o700)
    for (const [file, want] of [[store, 0o710], [path.join(store, 'ab'), 0o710], [path.join(store, 'ab/abc'), 0o640]] as const) {
      assert.equal(mode(file), want, file)
      assert.equal(fs.lstatSync(file).gid, group, file)
    }
  })
})
