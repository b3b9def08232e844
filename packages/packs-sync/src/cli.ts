// packs-sync: keeps a folder of packs (a `resourcepacks/`, or a world's
// `datapacks/`) up to date from a Packs site, trusting nothing it has not
// checked: each archive is identified by its SHA-256, all are checked in one
// signed batch answer for the player's Minecraft version, and a newer version
// is downloaded to a temporary file, checked against the signed size and
// SHA-256, and only then renamed over the old archive (which keeps its name:
// a world enables its data packs by file name).
//
// Exit codes: 0 everything verified; 1 the site is unreachable or an answer
// or a download does not verify (one line on stderr); 2 the command line is wrong.
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { Site, SyncError, describe, reason, verifyAnswer, type HashMatch, type PinnedKey } from './protocol.js'

const LOCK_FILE = '.packs-sync.json'
const RUN_LOCK = '.packs-sync.lock'
const BATCH = 200

const USAGE = `usage: packs-sync <folder> --site <url> (--game-version <release> | --pack-format <N>) [--password-file <file>] [--trust-new-key] [--dry-run]

Keeps the .zip packs in <folder> up to date from a Packs site.
The site's gate password comes from PACKS_MASTER_PASSWORD or --password-file (never the command line).
The site's signing key is pinned in <folder>/${LOCK_FILE} on first use; a key the pinned one did not
endorse is refused unless --trust-new-key.`

class UsageError extends Error {}

interface LockEntry {
  namespace: string
  pack_id: string
  version: string
  sha256: string
  size: number
  created_at: string
}

interface LockFile {
  site: string
  key: PinnedKey | null
  packs: Record<string, LockEntry>
}

interface Options {
  folder: string
  site: Site
  game: { game_version: string } | { pack_format: number }
  trustNewKey: boolean
  dryRun: boolean
}

function options(argv: string[]): Options {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        site: { type: 'string' }, 'game-version': { type: 'string' }, 'pack-format': { type: 'string' }, 'password-file': { type: 'string' },
        'trust-new-key': { type: 'boolean' }, 'dry-run': { type: 'boolean' }, help: { type: 'boolean' },
      },
    })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
    process.exit(0)
  }
  if (positionals.length !== 1) throw new UsageError('give exactly one folder')
  if (!values.site || !/^https?:\/\//.test(values.site)) throw new UsageError('--site must be an http:// or https:// URL')
  const gameVersion = values['game-version']
  const packFormat = values['pack-format']
  if ((gameVersion === undefined) === (packFormat === undefined)) throw new UsageError('give --game-version or --pack-format (one of them)')
  if (packFormat !== undefined && !/^\d{1,9}$/.test(packFormat)) throw new UsageError('--pack-format must be a whole number')
  const password = values['password-file'] !== undefined ? readPassword(values['password-file']) : process.env.PACKS_MASTER_PASSWORD
  if (!password) throw new UsageError('set PACKS_MASTER_PASSWORD or give --password-file')
  return {
    folder: positionals[0]!,
    site: new Site(values.site, password),
    game: gameVersion !== undefined ? { game_version: gameVersion } : { pack_format: Number(packFormat) },
    trustNewKey: values['trust-new-key'] === true,
    dryRun: values['dry-run'] === true,
  }
}

function readPassword(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim()
  } catch (error) {
    throw new UsageError(`cannot read --password-file: ${reason(error)}`)
  }
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256')
  await pipeline(fs.createReadStream(file), hash)
  return hash.digest('hex')
}

function readLock(folder: string, site: string): LockFile {
  const file = path.join(folder, LOCK_FILE)
  if (!fs.existsSync(file)) return { site, key: null, packs: {} }
  let lock: LockFile
  try {
    lock = JSON.parse(fs.readFileSync(file, 'utf8')) as LockFile
  } catch {
    throw new SyncError(`${file} is not valid JSON; remove it to start again (the site's key will be pinned anew)`)
  }
  if (lock.site !== site) throw new SyncError(`${folder} is kept in step with ${lock.site}, not ${site}`)
  return { site, key: lock.key ?? null, packs: lock.packs ?? {} }
}

/** Written to a temporary file and renamed: a crash leaves the old lock or the new one, never half. */
function writeLock(folder: string, lock: LockFile): void {
  const file = path.join(folder, LOCK_FILE)
  const temporary = `${file}.${process.pid}.tmp`
  fs.writeFileSync(temporary, `${JSON.stringify(lock, null, 2)}\n`)
  fs.renameSync(temporary, file)
}

/** One run at a time per folder; a lock left by a process that is gone is taken over. */
function takeRunLock(folder: string): () => void {
  const file = path.join(folder, RUN_LOCK)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' })
      return () => fs.rmSync(file, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new SyncError(`cannot write in ${folder}: ${reason(error)}`)
      const pid = Number(fs.readFileSync(file, 'utf8'))
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) throw new SyncError(`another packs-sync (pid ${pid}) is working on ${folder}`)
      fs.rmSync(file, { force: true })
    }
  }
  throw new SyncError(`cannot take ${file}`)
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function progress(label: string, received: number, total: number): void {
  if (process.stderr.isTTY) process.stderr.write(`\r${label} ${Math.floor((received / total) * 100)}%`)
}

/**
 * Downloads to a dot-file in the folder (same file system, so the rename is
 * atomic; Minecraft ignores it), checking the signed size and SHA-256, then
 * renames it over `target`. Any failure removes the temporary file.
 */
async function download(site: Site, url: string, expected: { size: number; sha256: string }, target: string, label: string): Promise<void> {
  const temporary = path.join(path.dirname(target), `.packs-sync-${randomBytes(6).toString('hex')}.tmp`)
  let out: fs.WriteStream | undefined
  try {
    let res: Response
    try {
      res = await fetch(url, { headers: site.headers(), signal: AbortSignal.timeout(10 * 60_000) })
    } catch (error) {
      throw new SyncError(`cannot download ${label}: ${reason(error)}`)
    }
    if (res.status !== 200 || res.body === null) throw new SyncError(`cannot download ${label}: ${await describe(res)}`)
    const hash = createHash('sha256')
    let received = 0
    if (!process.stderr.isTTY) process.stderr.write(`downloading ${label} (${expected.size} bytes)\n`)
    const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>)
    body.on('data', (chunk: Buffer) => {
      received += chunk.length
      hash.update(chunk)
      if (received > expected.size) body.destroy(new SyncError(`the download of ${label} is larger than the signed size (${expected.size} bytes)`))
      progress(label, received, expected.size)
    })
    try {
      out = fs.createWriteStream(temporary, { flags: 'wx' })
      await pipeline(body, out)
    } catch (error) {
      if (error instanceof SyncError) throw error
      throw new SyncError(`the site went away while downloading ${label} (${received} of ${expected.size} bytes): ${reason(error)}`)
    } finally {
      if (process.stderr.isTTY) process.stderr.write('\n')
    }
    if (received !== expected.size) throw new SyncError(`the download of ${label} has ${received} bytes, not the signed ${expected.size}`)
    const digest = hash.digest('hex')
    if (digest !== expected.sha256) throw new SyncError(`the download of ${label} does not match the signed SHA-256 (got ${digest})`)
    fs.renameSync(temporary, target)
  } finally {
    // A failed pipeline settles before the file stream has finished opening and closing: the
    // file could appear after a removal made now. Its 'close' comes last.
    const stream = out
    if (stream && !stream.closed) await new Promise<void>((resolve) => stream.once('close', () => resolve()))
    fs.rmSync(temporary, { force: true })
  }
}

async function sync(opts: Options): Promise<void> {
  const { folder, site } = opts
  if (!fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) throw new SyncError(`${folder} is not a folder`)
  const release = takeRunLock(folder)
  try {
    const lock = readLock(folder, site.base)
    const archives = fs.readdirSync(folder).filter((name) => name.toLowerCase().endsWith('.zip') && !name.startsWith('.')).sort()
    const hashes = new Map<string, string>()
    for (const name of archives) hashes.set(name, await sha256Of(path.join(folder, name)))

    // One signed batch answer (per 200 archives) says what each archive is and what is newest for this game.
    const matches = new Map<string, HashMatch | null>()
    const all = [...new Set(hashes.values())]
    for (let i = 0; i < all.length; i += BATCH) {
      const asked = all.slice(i, i + BATCH)
      const res = await site.request('/api/update-check/by-hash/', { method: 'POST', body: JSON.stringify({ hashes: asked, ...opts.game }) })
      if (res.status !== 200) throw new SyncError(`the site refused the check: ${await describe(res)}`)
      const bytes = Buffer.from(await res.arrayBuffer())
      const key = await verifyAnswer(site, bytes, res.headers.get('packs-signature'), lock.key ?? undefined, opts.trustNewKey)
      if (lock.key?.id !== key.id) process.stdout.write(`${lock.key ? 'now trusting' : 'pinned'} the site's signing key ${key.id}\n`)
      lock.key = key
      const answer = JSON.parse(bytes.toString('utf8')) as { hashes?: Record<string, HashMatch | null> }
      for (const hash of asked) {
        const match = answer.hashes?.[hash]
        if (match === undefined || (match !== null && match.hash !== hash)) throw new SyncError('the site\'s signed answer is not about the archives asked about')
        matches.set(hash, match)
      }
    }

    const game = 'game_version' in opts.game ? `Minecraft ${opts.game.game_version}` : `pack format ${opts.game.pack_format}`
    for (const name of archives) {
      const match = matches.get(hashes.get(name)!)
      if (!match) {
        process.stdout.write(`${name}: not from this site, left alone\n`)
        continue
      }
      const id = `${match.namespace}:${match.pack_id}`
      const installed = { namespace: match.namespace, pack_id: match.pack_id, version: match.version.name, sha256: match.version.sha256, size: match.version.size, created_at: match.version.created_at }
      const latest = match.latest
      if (latest === null) {
        process.stdout.write(`${name}: ${id} ${installed.version}; no version for ${game}, left alone\n`)
      } else if (latest.namespace !== match.namespace || latest.pack_id !== match.pack_id) {
        throw new SyncError(`the site's signed answer for ${name} names another pack`)
      } else if (latest.sha256 === installed.sha256) {
        process.stdout.write(`${name}: ${id} ${installed.version}, up to date\n`)
      } else if (Date.parse(latest.created_at) <= Date.parse(installed.created_at)) {
        // Never backwards: a newer archive stays, and an old signed answer replayed by someone cannot downgrade it.
        process.stdout.write(`${name}: ${id} ${installed.version} is newer than the newest for ${game} (${latest.version}), left alone\n`)
      } else if (opts.dryRun) {
        process.stdout.write(`${name}: ${id} ${installed.version} -> ${latest.version} (dry run: not downloaded)\n`)
      } else {
        await download(site, latest.download_url, latest, path.join(folder, name), `${id} ${latest.version}`)
        Object.assign(installed, { version: latest.version, sha256: latest.sha256, size: latest.size, created_at: latest.created_at })
        process.stdout.write(`${name}: ${id} ${match.version.name} -> ${latest.version}, updated\n`)
      }
      lock.packs[name] = installed
    }
    for (const name of Object.keys(lock.packs)) if (!archives.includes(name)) delete lock.packs[name]
    writeLock(folder, lock)
  } finally {
    release()
  }
}

try {
  await sync(options(process.argv.slice(2)))
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`packs-sync: ${error.message}\n${USAGE}\n`)
    process.exit(2)
  }
  process.stderr.write(`packs-sync: ${error instanceof SyncError ? error.message : reason(error)}\n`)
  process.exit(1)
}
