// The folder's lock file (.packs-sync.json: the site it follows, the pinned
// key, keys seen retired, what each archive is and the newest signature time
// accepted per pack) and the run lock (.packs-sync.lock: one run at a time).
//
// Every file packs-sync creates in the folder is opened with
// O_CREAT|O_EXCL|O_NOFOLLOW: a name someone planted in the folder beforehand
// (a symbolic link to a file elsewhere) is never written through. The lock
// is written whole to a temporary file, fsync'ed, then renamed over the old
// one, so a crash leaves the old lock or the new one, never half.
import fs from 'node:fs'
import path from 'node:path'
import { SyncError, normalizeSite, reason, type PinnedKey } from './protocol.js'

export const LOCK_FILE = '.packs-sync.json'
export const RUN_LOCK = '.packs-sync.lock'
/** A lock file larger than this is not one packs-sync wrote. */
const LOCK_LIMIT = 16 * 1024 * 1024

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_WRONLY } = fs.constants
/** Create a new file, and fail rather than follow a symbolic link or reuse a file already there. */
export const CREATE_NEW = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW

export interface LockEntry {
  namespace: string
  pack_id: string
  version: string
  sha256: string
  size: number
  created_at: string
}

export interface LockFile {
  site: string
  key: PinnedKey | null
  /** Keys seen retired (id: expires_at): refused from then on, whatever a later key list says. */
  retired_keys: Record<string, string>
  /** What each archive in the folder is (file name: pack and version). */
  packs: Record<string, LockEntry>
  /** Per pack (namespace:pack_id), the newest `created` (Unix seconds) of a signed answer accepted about it. */
  signed_at: Record<string, number>
}

/** The folder's lock, or undefined when the folder is not bound to a site yet. */
export function readLock(folder: string): LockFile | undefined {
  const file = path.join(folder, LOCK_FILE)
  let fd: number
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') throw new SyncError(`${file} is a symbolic link: packs-sync does not follow it; remove it (the site's key will be pinned anew)`)
    throw new SyncError(`cannot read ${file}: ${reason(error)}`)
  }
  let text: string
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile() || stat.size > LOCK_LIMIT) throw new SyncError(`${file} is not a lock file packs-sync wrote; remove it to start again`)
    text = fs.readFileSync(fd, 'utf8')
  } finally {
    fs.closeSync(fd)
  }
  let lock: Partial<LockFile>
  try {
    lock = JSON.parse(text) as Partial<LockFile>
  } catch {
    throw new SyncError(`${file} is not valid JSON; remove it to start again (the site's key will be pinned anew)`)
  }
  if (typeof lock !== 'object' || lock === null || typeof lock.site !== 'string') throw new SyncError(`${file} names no site; remove it to start again`)
  let site: string
  try {
    site = normalizeSite(lock.site)
  } catch {
    throw new SyncError(`${file} names no site; remove it to start again`)
  }
  return { site, key: lock.key ?? null, retired_keys: lock.retired_keys ?? {}, packs: lock.packs ?? {}, signed_at: lock.signed_at ?? {} }
}

/** Writes the lock: a new temporary file (never through a link), fsync, rename, then the folder's entry is made durable. */
export function writeLock(folder: string, lock: LockFile): void {
  writeFileAtomically(path.join(folder, LOCK_FILE), `${JSON.stringify(lock, null, 2)}\n`)
}

export function writeFileAtomically(file: string, text: string): void {
  const temporary = `${file}.${process.pid}.tmp`
  let fd: number
  try {
    fd = openNew(temporary)
  } catch (error) {
    throw new SyncError(`cannot write ${file}: ${reason(error)}`)
  }
  try {
    try {
      fs.writeFileSync(fd, text)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(temporary, file)
  } catch (error) {
    fs.rmSync(temporary, { force: true })
    throw new SyncError(`cannot write ${file}: ${reason(error)}`)
  }
  syncFolder(path.dirname(file))
}

/**
 * Creates `file` new. Something already at that name (a crashed run's
 * leftover, or a link someone planted) is unlinked, which removes the link
 * itself and never touches what it points at, and the exclusive create is
 * tried once more: if a name is planted again in between, it fails.
 */
function openNew(file: string): number {
  try {
    return fs.openSync(file, CREATE_NEW, 0o644)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    fs.unlinkSync(file)
    return fs.openSync(file, CREATE_NEW, 0o644)
  }
}

/** So a rename survives a power cut. Not every system lets a folder be opened for this; then the rename is as durable as it gets. */
export function syncFolder(folder: string): void {
  try {
    const fd = fs.openSync(folder, O_RDONLY)
    try {
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    // Windows cannot open a folder; its renames are durable on their own.
  }
}

/** One run at a time per folder; a lock left by a process that is gone is taken over. */
export function takeRunLock(folder: string): () => void {
  const file = path.join(folder, RUN_LOCK)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(file, CREATE_NEW, 0o644)
      try {
        fs.writeFileSync(fd, String(process.pid))
      } finally {
        fs.closeSync(fd)
      }
      return () => fs.rmSync(file, { force: true })
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new SyncError(`cannot write in ${folder}: ${reason(error)}`)
      const pid = runLockPid(file)
      if (pid !== undefined && alive(pid)) throw new SyncError(`another packs-sync (pid ${pid}) is working on ${folder}`)
      fs.rmSync(file, { force: true })
    }
  }
  throw new SyncError(`cannot take ${file}`)
}

function runLockPid(file: string): number | undefined {
  try {
    const fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW)
    try {
      const pid = Number(fs.readFileSync(fd, 'utf8').slice(0, 20))
      return Number.isInteger(pid) && pid > 0 ? pid : undefined
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return undefined
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
