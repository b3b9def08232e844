// The modes of what Packs keeps on the disk: the data directory, the SQLite
// database and its journals (src/db/index.ts), the stored files and their
// temporary copies (src/storage/local.ts), backups and exports
// (src/maintenance/private-files.ts). They hold the site secret (it signs
// sessions and gate cookies), the Ed25519 key that signs the update-check,
// the gate password's hash and every password and token hash: only the
// account the server runs as may read them, whatever the umask says.
// Directories are 0700 and files 0600 from their creation on; a site's older,
// looser ones are tightened at start (src/maintenance/private-files.ts).
// With PACKS_ACCEL_REDIRECT the store is the one exception: nginx sends its
// files, so their group may read them (shareWithGroup).
import fs from 'node:fs'

export const PRIVATE_DIR = 0o700
export const PRIVATE_FILE = 0o600

/** The permission bits of the group and of others: a private path has none. */
const SHARED_BITS = 0o077

/**
 * The group's bits on the store when nginx sends its files (PACKS_ACCEL_REDIRECT): nginx's workers run as
 * another user, so they reach the files through the group of the store's directory, which may pass through
 * its directories (not list them) and read its files. Others still get nothing, and nothing outside the
 * store is opened to the group but the directories above it inside the data directory, to pass through.
 */
const GROUP_PASSES = 0o010
const GROUP_READS = 0o040
export const SHARED_STORE_DIR = PRIVATE_DIR | GROUP_PASSES
export const SHARED_STORE_FILE = PRIVATE_FILE | GROUP_READS

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
  return changeMode(file, stats, (found) => ({ mode: found.mode & 0o7777 & ~SHARED_BITS }))
}

/** True when the path is as shareWithGroup leaves it: group `gid`, which may pass (directory) or read (file), and nothing for others. */
export function isSharedWithGroup(stats: fs.Stats, gid: number): boolean {
  return stats.gid === gid && (stats.mode & SHARED_BITS) === (stats.isDirectory() ? GROUP_PASSES : GROUP_READS)
}

/**
 * Gives `file` (a directory or regular file of the store) to group `gid`, which may then pass through it
 * (a directory) or read it (a file), and takes everything else away from the group and others; the owner's
 * permissions stay as they are. What nginx needs to send the store's files (PACKS_ACCEL_REDIRECT). The
 * owner must be a member of `gid`. Symbolic links and paths that are gone are left alone. True when
 * anything changed.
 */
export function shareWithGroup(file: string, gid: number, stats?: fs.Stats): boolean {
  return changeMode(file, stats, (found) => ({ mode: (found.mode & 0o7700) | (found.isDirectory() ? GROUP_PASSES : GROUP_READS), gid }))
}

/** What tightenMode and shareWithGroup do: the path's mode (and group) made what `want` says, without following a link. */
function changeMode(file: string, stats: fs.Stats | undefined, want: (found: fs.Stats) => { mode: number; gid?: number }): boolean {
  let found = stats
  if (found === undefined) {
    try {
      found = fs.lstatSync(file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
      throw error
    }
  }
  if (!found.isFile() && !found.isDirectory()) return false
  const { mode, gid = found.gid } = want(found)
  if ((found.mode & 0o7777) === mode && found.gid === gid) return false
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
      if (gid !== found.gid) fs.lchownSync(file, -1, gid)
      fs.chmodSync(file, mode)
      return true
    }
    throw error
  }
  try {
    const opened = fs.fstatSync(fd)
    if (opened.ino !== found.ino || opened.dev !== found.dev) return false
    // The group first: a change of group may clear set-id bits, never the permissions set after it.
    if (gid !== found.gid) fs.fchownSync(fd, -1, gid)
    fs.fchmodSync(fd, mode)
    return true
  } finally {
    fs.closeSync(fd)
  }
}
