// The modes of what Packs keeps on the disk: the data directory, the SQLite
// database and its journals (src/db/index.ts), the stored files and their
// temporary copies (src/storage/local.ts), backups and exports
// (src/maintenance/private-files.ts). They hold the site secret (it signs
// sessions and gate cookies), the Ed25519 key that signs the update-check,
// the gate password's hash and every password and token hash: only the
// account the server runs as may read them, whatever the umask says.
// Directories are 0700 and files 0600 from their creation on; a site's older,
// looser ones are tightened at start (src/maintenance/private-files.ts).
import fs from 'node:fs'

export const PRIVATE_DIR = 0o700
export const PRIVATE_FILE = 0o600

/** The permission bits of the group and of others: a private path has none. */
const SHARED_BITS = 0o077

/** True when neither the group nor others have any permission on the path these stats are of. */
export function isPrivate(stats: fs.Stats): boolean {
  return (stats.mode & SHARED_BITS) === 0
}

/**
 * Creates (or takes, when it exists) a directory only its owner can enter.
 * Missing parents are created 0700 as well; existing parents are left as they are.
 */
export function privateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR })
  // mkdir's mode goes through the umask (and leaves an existing directory as it is).
  fs.chmodSync(dir, PRIVATE_DIR)
}

/** A new file (never an existing one) readable by its owner only, from its creation on. */
export function openPrivateFile(file: string): number {
  const fd = fs.openSync(file, 'wx', PRIVATE_FILE)
  fs.fchmodSync(fd, PRIVATE_FILE)
  return fd
}

/**
 * Takes the group's and others' permissions away from `file`, a regular file
 * or a directory (the owner's stay as they are: tightening never gives a
 * permission). `stats`: its lstat, when the caller has it. A symbolic link,
 * or anything else that is not a file or a directory, is left alone, and so
 * is a path that is gone. True when the mode changed.
 */
export function tightenMode(file: string, stats?: fs.Stats): boolean {
  let found = stats
  if (found === undefined) {
    try {
      found = fs.lstatSync(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw error
    }
  }
  if ((!found.isFile() && !found.isDirectory()) || isPrivate(found)) return false
  const mode = found.mode & 0o7777 & ~SHARED_BITS
  // Changed through a descriptor opened without following a link: were the path swapped for a symbolic link
  // since lstat (by someone who could write into a directory that was still open to them), chmod would
  // change the link's target instead. O_NONBLOCK: a FIFO put there must not hang the start.
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ELOOP') return false
    // A file its owner may not read (mode 0200, say) cannot be opened to be changed: by its path, then.
    if (code === 'EACCES') {
      fs.chmodSync(file, mode)
      return true
    }
    throw error
  }
  try {
    const opened = fs.fstatSync(fd)
    if (opened.ino !== found.ino || opened.dev !== found.dev) return false
    fs.fchmodSync(fd, mode)
    return true
  } finally {
    fs.closeSync(fd)
  }
}
