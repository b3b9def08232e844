// Reading a stored version archive: is it a ZIP we can read, what does its
// root pack.mcmeta say, and is it a resource pack or a data pack? Works through FileStore ranged reads, so the archive is
// never loaded whole, wherever it is stored.
//
// An upload is hostile until proven otherwise (3000 central
// directory records naming one deflated 1 MiB pack.mcmeta cost 26 s of CPU), so
// the work here is bounded by the archive's size, never by what it claims:
// the central directory is walked once, record by record, without decoding
// names; at most MAX_ARCHIVE_ENTRIES records; entries whose data overlap are
// refused; and only the one root pack.mcmeta is ever inflated, at most
// MAX_MCMETA_BYTES of it. This is a small reader of our own rather than yauzl
// because yauzl's costs grow with what the archive says: a stream pipeline per
// read (about 50 µs a record through FileStore: 5 s for 100,000 records), and a
// CP437 decode and an extra-field parse per record (2.5 s for a 50 MiB central
// directory of long names, even from memory); it also checks neither overlap
// nor the directory's declared size, which Java's ZipFile, and so Minecraft,
// relies on.
// Layout: PKWARE APPNOTE.TXT 6.3.10, sections 4.3.7 (local header), 4.3.12
// (central directory record), 4.3.14 to 4.3.16 (ZIP64 and end records).
import { inflateRawSync } from 'node:zlib'
import type { FileStore } from '../storage/index.js'
import { InvalidUpload, StorageUnavailable } from '../errors.js'
import type { PackDeclaration, PackKind } from '../minecraft/declaration.js'
import { declaredRange, parseMcmeta } from '../minecraft/mcmeta.js'
import { packFormatOf } from './packmeta.js'

/**
 * Most central-directory records an archive may have. Large resource packs hold
 * tens of thousands of files; past this it is not a pack but a way to make us work.
 */
export const MAX_ARCHIVE_ENTRIES = 100_000
/** A pack.mcmeta is a few hundred bytes; one that inflates past this is not one we will parse. */
export const MAX_MCMETA_BYTES = 64 * 1024
/**
 * Deflate can make data a little larger (stored blocks add 5 bytes in 64 KiB,
 * fixed Huffman codes up to 1/8); a pack.mcmeta stored larger than this is padded.
 */
const MAX_MCMETA_STORED_BYTES = 2 * MAX_MCMETA_BYTES
/** The central directory is read in blocks of this size; the first read takes the archive's tail. */
const READ_AHEAD_BYTES = 1024 * 1024

const LOCAL_HEADER_SIGNATURE = 0x04034b50
const LOCAL_HEADER_SIZE = 30
const RECORD_SIGNATURE = 0x02014b50
const RECORD_SIZE = 46
const END_SIGNATURE = 0x06054b50
const END_SIZE = 22
const MAX_COMMENT_SIZE = 0xffff
const ZIP64_LOCATOR_SIGNATURE = 0x07064b50
const ZIP64_LOCATOR_SIZE = 20
const ZIP64_END_SIGNATURE = 0x06064b50
const ZIP64_END_SIZE = 56
const ZIP64_EXTRA_ID = 0x0001
/** A 32-bit size or offset with this value is in the entry's ZIP64 extra field instead. */
const ZIP64_SENTINEL = 0xffffffff
const FLAG_ENCRYPTED = 0x1
const FLAG_STRONG_ENCRYPTION = 0x40
const STORED = 0
const DEFLATED = 8
const MCMETA_NAME = Buffer.from('pack.mcmeta')
// The folders the game reads a pack's content from (PackType.getDirectory), with
// the separator Java's ZipFile lookups use: names written with backslashes are not found by the game.
const ASSETS_PREFIX = Buffer.from('assets/')
const DATA_PREFIX = Buffer.from('data/')

export interface ArchiveInfo {
  entries: number
  /** From pack.mcmeta at the root (docs/decisions.md#pack_format); null when absent or unusable. */
  packFormat: number | null
  /** Its kind from its root folders, and the format range its pack.mcmeta declares. */
  declaration: PackDeclaration
}

/**
 * Opens the stored ZIP and reads its pack.mcmeta. Throws InvalidUpload when it
 * is not a readable ZIP or is shaped to make reading it costly; an error from
 * the store itself propagates as it is, since it says nothing about the upload.
 */
export async function inspectArchive(store: Pick<FileStore, 'get'>, key: string, size: number): Promise<ArchiveInfo> {
  const reader = new StoreReader(store, key, size)
  const directory = await findCentralDirectory(reader)
  const walk = await walkCentralDirectory(reader, directory)
  const mcmeta = walk.mcmeta ? await readMcmeta(reader, walk.mcmeta, directory.offset) : undefined
  return {
    entries: directory.entries,
    packFormat: packFormatOf(mcmeta),
    declaration: { kind: kindOf(walk.hasAssets, walk.hasData), range: declaredRange(mcmeta) },
  }
}

/** A resource pack has assets/, a data pack data/; an archive with both or neither is not said to be either. */
export function kindOf(hasAssets: boolean, hasData: boolean): PackKind | null {
  if (hasAssets === hasData) return null
  return hasAssets ? 'resource' : 'data'
}

function unreadable(reason: string): InvalidUpload {
  return new InvalidUpload(`the file is not a readable ZIP archive: ${reason}`)
}

interface CentralDirectory {
  entries: number
  offset: number
  size: number
}

/** The end record's view of the central directory, checked against the file before any record is read. */
async function findCentralDirectory(reader: StoreReader): Promise<CentralDirectory> {
  if (reader.size < END_SIZE) throw unreadable('no end of central directory record')
  const tailStart = Math.max(0, reader.size - READ_AHEAD_BYTES)
  const tail = await reader.read(tailStart, reader.size)
  // The end record closes with a comment of up to 64 KiB that may itself hold
  // the signature; the real record is the last one whose comment reaches
  // exactly to the end of the file. The search never looks further back.
  const searchStart = Math.max(0, tail.length - END_SIZE - MAX_COMMENT_SIZE)
  const signature = u32(END_SIGNATURE)
  let at = tail.length - END_SIZE
  while (true) {
    at = tail.lastIndexOf(signature, at)
    if (at < searchStart) throw unreadable('no end of central directory record')
    if (tail.readUInt16LE(at + 20) === tail.length - at - END_SIZE) break
    if (at === 0) throw unreadable('no end of central directory record')
    at -= 1
  }
  let entries = tail.readUInt16LE(at + 10)
  let size = tail.readUInt32LE(at + 12)
  let offset = tail.readUInt32LE(at + 16)
  let diskNumber = tail.readUInt16LE(at + 4)
  let directoryLimit = tailStart + at
  // The locator sits right before the end record, so inside the tail just read.
  const locatorAt = at - ZIP64_LOCATOR_SIZE
  if (locatorAt >= 0 && tail.readUInt32LE(locatorAt) === ZIP64_LOCATOR_SIGNATURE) {
    const recordOffset = readUInt64(tail, locatorAt + 8)
    if (recordOffset + ZIP64_END_SIZE > tailStart + locatorAt) throw unreadable('its ZIP64 end record lies outside the file')
    const record = await reader.read(recordOffset, recordOffset + ZIP64_END_SIZE)
    if (record.readUInt32LE(0) !== ZIP64_END_SIGNATURE) throw unreadable('its ZIP64 end record is damaged')
    diskNumber = record.readUInt32LE(16)
    entries = readUInt64(record, 32)
    size = readUInt64(record, 40)
    offset = readUInt64(record, 48)
    directoryLimit = recordOffset
  }
  if (diskNumber !== 0) throw unreadable('it is split across several disks')
  if (entries > MAX_ARCHIVE_ENTRIES) {
    throw new InvalidUpload(`the archive has ${entries} entries; at most ${MAX_ARCHIVE_ENTRIES} are allowed`)
  }
  if (offset + size > directoryLimit) throw unreadable('its central directory lies outside the file')
  if (entries * RECORD_SIZE > size) throw unreadable(`its central directory is too small for the ${entries} entries it claims`)
  return { entries, offset, size }
}

interface McmetaRecord {
  flags: number
  method: number
  compressedSize: number
  uncompressedSize: number
  localHeaderOffset: number
}

interface DirectoryWalk {
  /** The root pack.mcmeta's record, if there is one. */
  mcmeta: McmetaRecord | null
  /** Some entry lies under assets/ at the root (a folder's own entry counts). */
  hasAssets: boolean
  /** Some entry lies under data/ at the root. */
  hasData: boolean
}

/**
 * Checks every record (sizes, names, no overlapping data) and returns the root
 * pack.mcmeta's, if any, and which of the root folders assets/ and data/ hold
 * entries. Names are compared as bytes, never decoded: the names Minecraft
 * looks up are plain ASCII, the same in CP437 and UTF-8.
 */
async function walkCentralDirectory(reader: StoreReader, directory: CentralDirectory): Promise<DirectoryWalk> {
  const end = directory.offset + directory.size
  const dataStarts = new Float64Array(directory.entries)
  const dataEnds = new Float64Array(directory.entries)
  let mcmeta: McmetaRecord | null = null
  let hasAssets = false
  let hasData = false
  let position = directory.offset
  for (let index = 0; index < directory.entries; index++) {
    if (position + RECORD_SIZE > end) throw unreadable('its central directory is cut short')
    const fixed = reader.cached(position, position + RECORD_SIZE) ?? await reader.read(position, position + RECORD_SIZE, end)
    if (fixed.readUInt32LE(0) !== RECORD_SIGNATURE) throw unreadable('its central directory is damaged')
    const flags = fixed.readUInt16LE(8)
    const method = fixed.readUInt16LE(10)
    let compressedSize = fixed.readUInt32LE(20)
    let uncompressedSize = fixed.readUInt32LE(24)
    const nameLength = fixed.readUInt16LE(28)
    const extraLength = fixed.readUInt16LE(30)
    const commentLength = fixed.readUInt16LE(32)
    let localHeaderOffset = fixed.readUInt32LE(42)
    const next = position + RECORD_SIZE + nameLength + extraLength + commentLength
    if (next > end) throw unreadable('its central directory is cut short')
    const variableEnd = position + RECORD_SIZE + nameLength + extraLength
    const variable = reader.cached(position + RECORD_SIZE, variableEnd) ?? await reader.read(position + RECORD_SIZE, variableEnd, end)
    const name = variable.subarray(0, nameLength)

    if (compressedSize === ZIP64_SENTINEL || uncompressedSize === ZIP64_SENTINEL || localHeaderOffset === ZIP64_SENTINEL) {
      const zip64 = zip64Field(variable.subarray(nameLength))
      if (!zip64) throw unreadable('an entry lacks its ZIP64 sizes')
      // The field holds, in this order, only the values whose 32-bit field is the sentinel.
      let at = 0
      const take = (): number => {
        if (at + 8 > zip64.length) throw unreadable('an entry lacks its ZIP64 sizes')
        at += 8
        return readUInt64(zip64, at - 8)
      }
      if (uncompressedSize === ZIP64_SENTINEL) uncompressedSize = take()
      if (compressedSize === ZIP64_SENTINEL) compressedSize = take()
      if (localHeaderOffset === ZIP64_SENTINEL) localHeaderOffset = take()
    }

    if (flags & FLAG_STRONG_ENCRYPTION) throw unreadable('an entry uses strong encryption')
    if (method === STORED && compressedSize !== uncompressedSize + (flags & FLAG_ENCRYPTED ? 12 : 0)) {
      throw unreadable('a stored entry has two different sizes')
    }
    if (isUnsafeName(name)) throw unreadable('an entry name is an absolute path or leads out of the archive with ..')
    // The local header repeats the name, so this is where the entry's bytes end
    // at the least; ranges that are disjoint so reckoned cannot share data.
    dataStarts[index] = localHeaderOffset
    dataEnds[index] = localHeaderOffset + LOCAL_HEADER_SIZE + nameLength + compressedSize
    if (dataEnds[index]! > directory.offset) throw unreadable('an entry lies outside the archive data')

    if (nameLength === MCMETA_NAME.length && name.equals(MCMETA_NAME)) {
      // No tool writes two, and readers disagree on which counts (Java's
      // ZipFile, which Minecraft reads packs with, finds the last; we would
      // read the first): refuse rather than guess, before inflating either.
      if (mcmeta) throw new InvalidUpload('the archive has more than one pack.mcmeta at its root (duplicate entry)')
      mcmeta = { flags, method, compressedSize, uncompressedSize, localHeaderOffset }
    }
    hasAssets ||= startsWith(name, ASSETS_PREFIX)
    hasData ||= startsWith(name, DATA_PREFIX)
    position = next
  }
  if (overlaps(dataStarts, dataEnds)) {
    throw new InvalidUpload('the archive has overlapping entries (entries that share data, as zip bombs do)')
  }
  return { mcmeta, hasAssets, hasData }
}

function startsWith(name: Buffer, prefix: Buffer): boolean {
  return name.length >= prefix.length && name.subarray(0, prefix.length).equals(prefix)
}

/**
 * Whether any two ranges [start, end) intersect (each is non-empty). Sorting
 * the starts and the ends apart is enough: with both sorted, no two ranges
 * intersect exactly when every start is at or after the previous end.
 */
function overlaps(starts: Float64Array, ends: Float64Array): boolean {
  starts.sort()
  ends.sort()
  for (let i = 1; i < starts.length; i++) if (starts[i]! < ends[i - 1]!) return true
  return false
}

/** The data of the ZIP64 extended information field among `extra`'s fields, if there. */
function zip64Field(extra: Buffer): Buffer | undefined {
  let at = 0
  while (at + 4 <= extra.length) {
    const id = extra.readUInt16LE(at)
    const length = extra.readUInt16LE(at + 2)
    if (at + 4 + length > extra.length) return undefined
    if (id === ZIP64_EXTRA_ID) return extra.subarray(at + 4, at + 4 + length)
    at += 4 + length
  }
  return undefined
}

const SLASH = 0x2f
const BACKSLASH = 0x5c
const COLON = 0x3a
const DOT_DOT = Buffer.from('..')

/**
 * An absolute name (`/x`, `C:x`) or one with a `..` segment, separators being
 * `/` or `\`: whoever unzips a downloaded pack must not have files written
 * outside its folder. The same names yauzl refused before.
 */
function isUnsafeName(name: Buffer): boolean {
  const first = name[0]
  if (first === SLASH || first === BACKSLASH) return true
  if (first !== undefined && isAsciiLetter(first) && name[1] === COLON) return true
  for (let at = name.indexOf(DOT_DOT); at !== -1; at = name.indexOf(DOT_DOT, at + 1)) {
    const before = name[at - 1]
    const after = name[at + 2]
    if ((at === 0 || before === SLASH || before === BACKSLASH) && (after === undefined || after === SLASH || after === BACKSLASH)) return true
  }
  return false
}

function isAsciiLetter(byte: number): boolean {
  return (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
}

/**
 * The root pack.mcmeta as JSON, or undefined when it cannot be read or is not
 * JSON; a broken or huge pack.mcmeta never rejects the upload (docs/decisions.md#pack_format).
 */
async function readMcmeta(reader: StoreReader, record: McmetaRecord, dataLimit: number): Promise<unknown> {
  if (record.flags & FLAG_ENCRYPTED) return undefined
  if (record.method !== STORED && record.method !== DEFLATED) return undefined
  if (record.uncompressedSize > MAX_MCMETA_BYTES || record.compressedSize > MAX_MCMETA_STORED_BYTES) return undefined
  // The walk checked that the local header lies before the central directory.
  // One fetch takes the header, its name and extra field (64 KiB each at most) and the data.
  const headerEnd = record.localHeaderOffset + LOCAL_HEADER_SIZE
  const header = await reader.read(record.localHeaderOffset, headerEnd, Math.min(dataLimit, headerEnd + 2 * 0xffff + record.compressedSize))
  if (header.readUInt32LE(0) !== LOCAL_HEADER_SIGNATURE) return undefined
  const dataStart = record.localHeaderOffset + LOCAL_HEADER_SIZE + header.readUInt16LE(26) + header.readUInt16LE(28)
  const dataEnd = dataStart + record.compressedSize
  if (dataEnd > dataLimit) return undefined
  const data = await reader.read(dataStart, dataEnd)
  let text: Buffer
  if (record.method === STORED) {
    text = data
  } else {
    // Inflation stops at the cap whatever the header says the size is.
    try {
      text = inflateRawSync(data, { maxOutputLength: MAX_MCMETA_BYTES })
    } catch {
      return undefined
    }
  }
  // A size that lies marks a damaged entry; its text is not trusted either.
  if (text.length !== record.uncompressedSize) return undefined
  return parseMcmeta(text.toString('utf8'))
}

function u32(value: number): Buffer {
  const bytes = Buffer.alloc(4)
  bytes.writeUInt32LE(value)
  return bytes
}

/** A 64-bit field as a number: exact up to 2^53, and past that still larger than any file we hold. */
function readUInt64(bytes: Buffer, at: number): number {
  return bytes.readUInt32LE(at + 4) * 0x1_0000_0000 + bytes.readUInt32LE(at)
}

/** Ranged reads of one stored file, with one block of read-ahead for the central directory's many small reads. */
class StoreReader {
  private block: { start: number; bytes: Buffer } | undefined

  constructor(
    private readonly store: Pick<FileStore, 'get'>,
    private readonly key: string,
    readonly size: number,
  ) {}

  /**
   * Bytes [start, end), which the caller has checked lie inside the file; when
   * they are not at hand, fetches up to `aheadLimit` (never past the file) so
   * that the next reads are.
   */
  async read(start: number, end: number, aheadLimit = end): Promise<Buffer> {
    const cached = this.cached(start, end)
    if (cached) return cached
    const fetchEnd = Math.min(this.size, Math.max(end, Math.min(aheadLimit, start + READ_AHEAD_BYTES)))
    const chunks: Buffer[] = []
    for await (const chunk of await this.store.get(this.key, { start, end: fetchEnd - 1 })) chunks.push(chunk as Buffer)
    const bytes = Buffer.concat(chunks)
    // The upload measured this file's size; a store that returns something else is at fault, not the archive.
    if (bytes.length !== fetchEnd - start) {
      throw new StorageUnavailable(new Error(`the store returned ${bytes.length} bytes of ${this.key} for a range of ${fetchEnd - start}`))
    }
    this.block = { start, bytes }
    return bytes.subarray(0, end - start)
  }

  /** Bytes [start, end) if the last fetch holds them: the walk takes most records so, without waiting. */
  cached(start: number, end: number): Buffer | undefined {
    const block = this.block
    if (start === end) return Buffer.alloc(0)
    if (!block || start < block.start || end > block.start + block.bytes.length) return undefined
    return block.bytes.subarray(start - block.start, end - block.start)
  }
}
