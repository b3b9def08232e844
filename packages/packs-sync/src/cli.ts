// packs-sync: keeps a folder of packs (a `resourcepacks/`, or a world's
// `datapacks/`) up to date from a Packs site, trusting nothing it has not
// checked: each archive is identified by its SHA-256, all are checked in one
// signed batch answer for the player's Minecraft version, and a newer version
// is downloaded to a temporary file, checked against the signed size and
// SHA-256, and only then renamed over the old archive (which keeps its name:
// a world enables its data packs by file name).
//
// The site is untrusted until it proves otherwise: every answer is read with a
// cap, must carry an RFC 9421 signature about the very question asked, fresh,
// not older than one already accepted, by a key the pinned one leads to and
// that is not retired; a file's pack never changes without the player saying
// so; and whatever the site wrote is escaped before it reaches the terminal.
//
// Exit codes: 0 everything verified; 1 the site is unreachable, an answer or a
// download does not verify (one line on stderr), or an archive was left alone
// because the site now names another pack for it; 2 the command line is wrong.
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { pipeline } from 'node:stream/promises'
import { CREATE_NEW, LOCK_FILE, readLock, syncFolder, takeRunLock, writeLock, type LockEntry, type LockFile } from './lock.js'
import {
  ANSWER_LIMIT, Site, SyncError, describe, establishTrust, isoOf, readCapped, reason, shown, signatureOf, verifyAnswer, type HashMatch,
} from './protocol.js'

const BATCH = 200
/** The most of an error's body read for its detail when a download is refused. */
const ERROR_LIMIT = 64 * 1024

const USAGE = `usage: packs-sync <folder> --site <url> (--game-version <release> | --pack-format <N>) [--password-file <file>]
                  [--trust-new-key] [--rebind] [--allow-pack-change] [--dry-run]

Keeps the .zip packs in <folder> up to date from a Packs site.
The site's gate password comes from PACKS_MASTER_PASSWORD or --password-file (never the command line).
<folder>/${LOCK_FILE} binds the folder to the site and pins the site's signing key on first use.

  --trust-new-key      accept a signing key the pinned one did not endorse (the site lost its keys)
  --rebind             follow the site to a new --site URL (it must still prove it holds the pinned key)
  --allow-pack-change  accept an answer that names another pack for an archive than the one remembered
  --dry-run            check and report, download nothing`

class UsageError extends Error {}

interface Options {
  folder: string
  site: Site
  game: { game_version: string } | { pack_format: number }
  trustNewKey: boolean
  rebind: boolean
  allowPackChange: boolean
  dryRun: boolean
}

/** Every line packs-sync prints goes through these: site text is escaped (see `shown`). */
const out = (line: string) => process.stdout.write(`${shown(line)}\n`)
const warn = (line: string) => process.stderr.write(`${shown(line)}\n`)

function options(argv: string[]): Options {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        site: { type: 'string' }, 'game-version': { type: 'string' }, 'pack-format': { type: 'string' }, 'password-file': { type: 'string' },
        'trust-new-key': { type: 'boolean' }, rebind: { type: 'boolean' }, 'allow-pack-change': { type: 'boolean' },
        'dry-run': { type: 'boolean' }, help: { type: 'boolean' },
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
  if (!values.site || !/^https?:\/\/[^/?#]/.test(values.site) || !URL.canParse(values.site)) throw new UsageError('--site must be an http:// or https:// URL')
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
    rebind: values.rebind === true,
    allowPackChange: values['allow-pack-change'] === true,
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

function progress(label: string, received: number, total: number): void {
  if (process.stderr.isTTY) process.stderr.write(`\r${shown(label)} ${Math.floor((received / total) * 100)}%`)
}

/**
 * Fetches a download, following at most 5 redirects by hand: the gate
 * password goes only to the site's own origin, never to a host a redirect or
 * a download_url names (fetch itself would forward a custom header anywhere).
 */
async function fetchDownload(site: Site, start: string, label: string): Promise<Response> {
  const origin = new URL(site.base).origin
  let url = new URL(start, site.base)
  for (let hop = 0; hop <= 5; hop++) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new SyncError(`cannot download ${label}: not an http(s) URL`)
    let res: Response
    try {
      res = await fetch(url, { headers: url.origin === origin ? site.headers() : { 'user-agent': site.headers()['user-agent']! }, redirect: 'manual', signal: AbortSignal.timeout(10 * 60_000) })
    } catch (error) {
      throw new SyncError(`cannot download ${label}: ${reason(error)}`)
    }
    const location = res.headers.get('location')
    if (res.status < 300 || res.status > 399 || location === null) return res
    await res.body?.cancel().catch(() => {})
    url = new URL(location, url)
  }
  throw new SyncError(`cannot download ${label}: too many redirects`)
}

/**
 * Downloads to a new dot-file in the folder (same file system, so the rename
 * is atomic; Minecraft ignores it), created with O_EXCL|O_NOFOLLOW, checking
 * the signed size and SHA-256 as bytes arrive, then fsync and rename over
 * `target`. Any failure removes the temporary file.
 */
async function download(site: Site, url: string, expected: { size: number; sha256: string }, target: string, label: string): Promise<void> {
  const res = await fetchDownload(site, url, label)
  if (res.status !== 200 || res.body === null) {
    const text = (await readCapped(res, ERROR_LIMIT, 'an error', true)).toString('utf8')
    throw new SyncError(`cannot download ${label}: ${describe(res.status, text)}`)
  }
  const temporary = path.join(path.dirname(target), `.packs-sync-${randomBytes(6).toString('hex')}.tmp`)
  const file = await fs.promises.open(temporary, CREATE_NEW, 0o644)
  let renamed = false
  try {
    const hash = createHash('sha256')
    let received = 0
    if (!process.stderr.isTTY) warn(`downloading ${label} (${expected.size} bytes)`)
    const reader = res.body.getReader()
    try {
      while (true) {
        let chunk: Awaited<ReturnType<typeof reader.read>>
        try {
          chunk = await reader.read()
        } catch (error) {
          throw new SyncError(`the site went away while downloading ${label} (${received} of ${expected.size} bytes): ${reason(error)}`)
        }
        if (chunk.done) break
        received += chunk.value.length
        if (received > expected.size) {
          await reader.cancel().catch(() => {})
          throw new SyncError(`the download of ${label} is larger than the signed size (${expected.size} bytes)`)
        }
        hash.update(chunk.value)
        await file.write(chunk.value)
        progress(label, received, expected.size)
      }
    } finally {
      if (process.stderr.isTTY) process.stderr.write('\n')
    }
    if (received !== expected.size) throw new SyncError(`the download of ${label} has ${received} bytes, not the signed ${expected.size}`)
    const digest = hash.digest('hex')
    if (digest !== expected.sha256) throw new SyncError(`the download of ${label} does not match the signed SHA-256 (got ${digest})`)
    await file.sync()
    await file.close()
    fs.renameSync(temporary, target)
    renamed = true
    syncFolder(path.dirname(target))
  } finally {
    await file.close().catch(() => {})
    if (!renamed) fs.rmSync(temporary, { force: true })
  }
}

const packOf = (entry: { namespace: string; pack_id: string }) => `${entry.namespace}:${entry.pack_id}`

async function sync(opts: Options): Promise<number> {
  const { folder, site } = opts
  if (!fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) throw new SyncError(`${folder} is not a folder`)
  const release = takeRunLock(folder)
  try {
    const existing = readLock(folder)
    if (existing !== undefined && existing.site !== site.base && !opts.rebind) {
      throw new SyncError(`${folder} is kept in step with ${existing.site}, not ${site.base}; if the site moved there, run again with --rebind`)
    }
    const lock: LockFile = existing ?? { site: site.base, key: null, retired_keys: {}, packs: {}, signed_at: {} }
    // Whether a failure may still write the lock: what was learned about the folder's own site (a retirement,
    // a rotation) is kept. A folder is bound to a site only once its key list and answers verified.
    let keep = false
    try {
      const trust = await establishTrust(site, lock.key, lock.retired_keys, opts.trustNewKey, Date.now())
      lock.retired_keys = trust.retired
      if (existing !== undefined && existing.site === site.base) {
        keep = true
        lock.key = trust.pin
        if (trust.change) out(trust.change)
      }

      const archives = fs.readdirSync(folder).filter((name) => name.toLowerCase().endsWith('.zip') && !name.startsWith('.')).sort()
      const hashes = new Map<string, string>()
      for (const name of archives) hashes.set(name, await sha256Of(path.join(folder, name)))

      // One signed batch answer (per 200 archives) says what each archive is and what is newest for this game.
      const matches = new Map<string, HashMatch | null>()
      const signedAt = new Map<string, number>()
      const all = [...new Set(hashes.values())]
      for (let i = 0; i < all.length; i += BATCH) {
        const asked = all.slice(i, i + BATCH)
        const answer = await site.ask('/api/update-check/by-hash/', ANSWER_LIMIT, JSON.stringify({ hashes: asked, ...opts.game }))
        const what = 'the site\'s answer'
        const params = signatureOf(answer, what, Date.now())
        verifyAnswer(params, trust, what)
        let parsed: { hashes?: Record<string, HashMatch | null> }
        try {
          parsed = JSON.parse(answer.body.toString('utf8')) as typeof parsed
        } catch {
          throw new SyncError('the site\'s signed answer is not JSON')
        }
        for (const hash of asked) {
          const match = parsed.hashes?.[hash]
          if (match === undefined || (match !== null && (typeof match !== 'object' || match.hash !== hash))) throw new SyncError('the site\'s signed answer is not about the archives asked about')
          if (match !== null) {
            const pack = packOf(match).toLowerCase()
            const before = lock.signed_at[pack]
            if (before !== undefined && params.created < before) {
              throw new SyncError(`the site's answer about ${packOf(match)} was signed at ${isoOf(params.created)}, before one already accepted `
                + `(${isoOf(before)}): an old answer replayed, refused`)
            }
            signedAt.set(pack, Math.max(signedAt.get(pack) ?? 0, params.created))
          }
          matches.set(hash, match)
        }
      }

      // Verified: the folder follows this site from now on.
      if (!keep) {
        if (existing !== undefined) out(`${folder} now follows ${site.base} (was ${existing.site})`)
        lock.site = site.base
        lock.key = trust.pin
        if (trust.change) out(trust.change)
        keep = true
      }
      for (const [pack, created] of signedAt) lock.signed_at[pack] = Math.max(lock.signed_at[pack] ?? 0, created)

      let problems = 0
      const game = 'game_version' in opts.game ? `Minecraft ${opts.game.game_version}` : `pack format ${opts.game.pack_format}`
      for (const name of archives) {
        const match = matches.get(hashes.get(name)!)
        if (!match) {
          out(`${name}: not from this site, left alone`)
          continue
        }
        const id = packOf(match)
        const remembered = lock.packs[name]
        if (remembered !== undefined && packOf(remembered).toLowerCase() !== id.toLowerCase()) {
          if (!opts.allowPackChange) {
            // The site (or whoever copied an archive) now claims this file for another pack: following it would let one
            // pack's updates replace another's archive. The player decides.
            warn(`${name}: packs-sync knows it as ${packOf(remembered)}, but the site now names ${id}; left alone (--allow-pack-change accepts it)`)
            problems++
            continue
          }
          out(`${name}: now ${id}, was ${packOf(remembered)} (--allow-pack-change)`)
        }
        const installed: LockEntry = { namespace: match.namespace, pack_id: match.pack_id, version: match.version.name, sha256: match.version.sha256, size: match.version.size, created_at: match.version.created_at }
        const latest = match.latest
        if (latest === null) {
          out(`${name}: ${id} ${installed.version}; no version for ${game}, left alone`)
        } else if (latest.namespace !== match.namespace || latest.pack_id !== match.pack_id) {
          throw new SyncError(`the site's signed answer for ${name} names another pack`)
        } else if (latest.sha256 === installed.sha256) {
          out(`${name}: ${id} ${installed.version}, up to date`)
        } else if (Date.parse(latest.created_at) <= Date.parse(installed.created_at)) {
          // Never backwards: a newer archive stays, and an old signed answer replayed by someone cannot downgrade it.
          out(`${name}: ${id} ${installed.version} is newer than the newest for ${game} (${latest.version}), left alone`)
        } else if (opts.dryRun) {
          out(`${name}: ${id} ${installed.version} -> ${latest.version} (dry run: not downloaded)`)
        } else {
          await download(site, latest.download_url, latest, path.join(folder, name), `${id} ${latest.version}`)
          Object.assign(installed, { version: latest.version, sha256: latest.sha256, size: latest.size, created_at: latest.created_at })
          out(`${name}: ${id} ${match.version.name} -> ${latest.version}, updated`)
        }
        lock.packs[name] = installed
      }
      // An archive that is gone is forgotten; one the site no longer knows keeps what it was.
      for (const name of Object.keys(lock.packs)) if (!archives.includes(name)) delete lock.packs[name]
      writeLock(folder, lock)
      return problems > 0 ? 1 : 0
    } catch (error) {
      if (keep) {
        try {
          writeLock(folder, lock)
        } catch {
          // The error that stopped the run is the one to tell.
        }
      }
      throw error
    }
  } finally {
    release()
  }
}

try {
  process.exitCode = await sync(options(process.argv.slice(2)))
} catch (error) {
  if (error instanceof UsageError) {
    process.stderr.write(`packs-sync: ${shown(error.message)}\n${USAGE}\n`)
    process.exit(2)
  }
  warn(`packs-sync: ${error instanceof SyncError ? error.message : reason(error)}`)
  process.exit(1)
}
