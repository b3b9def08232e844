// Test files made in code: tiny but real PNG, JPEG, GIF, WebP, MP4, WebM and
// ZIP bytes (hand-built hostile ones too), and multipart bodies to carry them.
import { randomUUID } from 'node:crypto'
import { crc32, deflateRawSync, deflateSync } from 'node:zlib'
import yazl from 'yazl'

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const typeAndData = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typeAndData))
  return Buffer.concat([length, typeAndData, crc])
}

/** A valid width x height RGB PNG filled with one colour. */
export function png(width = 1, height = 1, rgb: [number, number, number] = [255, 0, 0]): Buffer {
  return pixelPng(width, height, () => rgb)
}

/** A valid width x height RGB PNG whose pixel (x, y) is `pixel(x, y)`. */
export function pixelPng(width: number, height: number, pixel: (x: number, y: number) => [number, number, number]): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8 // bit depth
  header[9] = 2 // colour type RGB
  const rows = Array.from({ length: height }, (_, y) =>
    Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, (_, x) => pixel(x, y)).flat())]))
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(Buffer.concat(rows))),
    pngChunk('IEND', Buffer.alloc(0)),
  ])
}

/** JPEG signature with a JFIF APP0 segment: what file-type (and browsers) recognise as JPEG. */
export function jpeg(): Buffer {
  return Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xff, 0xd9])
}

export function gif(): Buffer {
  return Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64')
}

export function webp(): Buffer {
  // RIFF....WEBPVP8L with a 1x1 lossless bitstream.
  return Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64')
}

/** An ISO base media file starting with an `ftyp` box of brand isom: detected as video/mp4. */
export function mp4(): Buffer {
  const ftyp = Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isommp41')])
  const mdat = Buffer.concat([Buffer.from([0, 0, 0, 0x10]), Buffer.from('mdat'), Buffer.alloc(8)])
  return Buffer.concat([ftyp, mdat])
}

/** An EBML header whose DocType is "webm". */
export function webm(): Buffer {
  return Buffer.from([
    0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0xf7, 0x81, 0x01, 0x42, 0xf2, 0x81, 0x04, 0x42, 0xf3,
    0x81, 0x08, 0x42, 0x82, 0x84, 0x77, 0x65, 0x62, 0x6d, 0x42, 0x87, 0x81, 0x04, 0x42, 0x85, 0x81, 0x02,
  ])
}

/** A ZIP with the given entries (name -> content). */
export async function zip(entries: Record<string, string | Buffer>): Promise<Buffer> {
  const archive = new yazl.ZipFile()
  for (const [name, content] of Object.entries(entries)) archive.addBuffer(Buffer.from(content), name)
  archive.end()
  const chunks: Buffer[] = []
  for await (const chunk of archive.outputStream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/**
 * A data pack archive whose pack.mcmeta declares `packFormat`. Each call makes
 * different bytes (a build id inside), as two real packs' archives are: an
 * archive's bytes belong to the first pack that publishes them, so two users
 * publishing "the same" fixture would be refused.
 */
export function datapack(packFormat: number | null = 48, extra: Record<string, string> = {}): Promise<Buffer> {
  const meta: Record<string, string> = packFormat === null ? {} : { 'pack.mcmeta': JSON.stringify({ pack: { pack_format: packFormat, description: 'test pack' } }) }
  return zip({ ...meta, 'data/test/function/hello.mcfunction': 'say hello', 'data/test/build.txt': randomUUID(), ...extra })
}

/** One local entry of a hand-built ZIP (rawZip). */
export interface RawZipEntry {
  name: string
  /** The bytes as stored: already deflated when `method` is 8. */
  data: Buffer
  /** 0 stored (the default), 8 deflated. */
  method?: 0 | 8
  /** What the headers claim the data inflates to; defaults to `data.length`, which is right for stored data. */
  uncompressedSize?: number
}

/** One central-directory record of a hand-built ZIP: which local entry it points at, and what it claims. */
export interface RawZipRecord {
  entry: number
  /** The name in this record; defaults to the local entry's. */
  name?: string
  /** Where the record says the local header is; defaults to where the entry really is. */
  offset?: number
  uncompressedSize?: number
}

export interface RawZipOptions {
  /** The central directory; defaults to one record per entry, in order. */
  records?: RawZipRecord[]
  /** The entry count the end-of-central-directory record claims; defaults to the number of records. */
  entryCount?: number
  /** Write ZIP64 end records (needed past 65,535 entries). */
  zip64?: boolean
  comment?: Buffer
}

/** The 30-byte local file header of `entry`, followed by its name. */
export function zipLocalHeader(entry: RawZipEntry): Buffer {
  const name = Buffer.from(entry.name)
  const header = Buffer.alloc(30)
  header.writeUInt32LE(0x04034b50, 0)
  header.writeUInt16LE(20, 4)
  header.writeUInt16LE(entry.method ?? 0, 8)
  header.writeUInt32LE(zipCrc(entry), 14)
  header.writeUInt32LE(entry.data.length, 18)
  header.writeUInt32LE(entry.uncompressedSize ?? entry.data.length, 22)
  header.writeUInt16LE(name.length, 26)
  return Buffer.concat([header, name])
}

/**
 * A ZIP written byte by byte, so that it can say what no honest tool writes:
 * records sharing or overlapping local data, sizes that lie, counts that do
 * not fit. yauzl ignores CRCs; the stored ones are right only for stored data.
 */
export function rawZip(entries: RawZipEntry[], options: RawZipOptions = {}): Buffer {
  const parts: Buffer[] = []
  const offsets: number[] = []
  let position = 0
  for (const entry of entries) {
    offsets.push(position)
    const header = zipLocalHeader(entry)
    parts.push(header, entry.data)
    position += header.length + entry.data.length
  }
  const records: RawZipRecord[] = options.records ?? entries.map((_, index) => ({ entry: index }))
  const centralOffset = position
  for (const record of records) {
    const entry = entries[record.entry]!
    const name = Buffer.from(record.name ?? entry.name)
    const header = Buffer.alloc(46)
    header.writeUInt32LE(0x02014b50, 0)
    header.writeUInt16LE(20, 4)
    header.writeUInt16LE(20, 6)
    header.writeUInt16LE(entry.method ?? 0, 10)
    header.writeUInt32LE(zipCrc(entry), 16)
    header.writeUInt32LE(entry.data.length, 20)
    header.writeUInt32LE(record.uncompressedSize ?? entry.uncompressedSize ?? entry.data.length, 24)
    header.writeUInt16LE(name.length, 28)
    header.writeUInt32LE(record.offset ?? offsets[record.entry]!, 42)
    parts.push(header, name)
    position += header.length + name.length
  }
  const centralSize = position - centralOffset
  const count = options.entryCount ?? records.length
  if (options.zip64) {
    const record = Buffer.alloc(56)
    record.writeUInt32LE(0x06064b50, 0)
    record.writeBigUInt64LE(44n, 4)
    record.writeUInt16LE(45, 12)
    record.writeUInt16LE(45, 14)
    record.writeBigUInt64LE(BigInt(count), 24)
    record.writeBigUInt64LE(BigInt(count), 32)
    record.writeBigUInt64LE(BigInt(centralSize), 40)
    record.writeBigUInt64LE(BigInt(centralOffset), 48)
    const locator = Buffer.alloc(20)
    locator.writeUInt32LE(0x07064b50, 0)
    locator.writeBigUInt64LE(BigInt(position), 8)
    locator.writeUInt32LE(1, 16)
    parts.push(record, locator)
  }
  const comment = options.comment ?? Buffer.alloc(0)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(options.zip64 ? 0xffff : count, 8)
  end.writeUInt16LE(options.zip64 ? 0xffff : count, 10)
  end.writeUInt32LE(options.zip64 ? 0xffffffff : centralSize, 12)
  end.writeUInt32LE(options.zip64 ? 0xffffffff : centralOffset, 16)
  end.writeUInt16LE(comment.length, 20)
  parts.push(end, comment)
  return Buffer.concat(parts)
}

function zipCrc(entry: RawZipEntry): number {
  return (entry.method ?? 0) === 0 ? crc32(entry.data) : 0
}

/**
 * The ZIP entry bomb: one local `pack.mcmeta` holding 1 MiB of
 * spaces deflated to about a kilobyte, and `copies` central-directory records
 * all naming it and pointing at it (172 KB for 3000).
 */
export function zipEntryBomb(copies = 3000): Buffer {
  const inflated = Buffer.alloc(1024 * 1024, 0x20)
  const entry: RawZipEntry = { name: 'pack.mcmeta', data: deflateRawSync(inflated, { level: 9 }), method: 8, uncompressedSize: inflated.length }
  return rawZip([entry], { records: Array.from({ length: copies }, () => ({ entry: 0 })) })
}

export interface Part {
  name: string
  value: string | Buffer
  filename?: string
  contentType?: string
}

/** A multipart/form-data body, parts in the given order. */
export function multipart(parts: Part[], boundary = `----packs${Math.random().toString(16).slice(2)}`): { payload: Buffer; headers: Record<string, string> } {
  const chunks: Buffer[] = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`
    const type = part.filename !== undefined ? `\r\nContent-Type: ${part.contentType ?? 'application/octet-stream'}` : ''
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`))
    chunks.push(Buffer.from(part.value))
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { payload: Buffer.concat(chunks), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } }
}
