// Reading a stored version archive: is it a ZIP we can read, and what does its
// pack.mcmeta say? Works through FileStore ranged reads, so the archive is
// never loaded whole, wherever it is stored.
import { Readable } from 'node:stream'
import yauzl from 'yauzl'
import type { FileStore } from '../storage/index.js'
import { InvalidUpload } from './errors.js'
import { packFormatOfText } from './packmeta.js'

/** A pack.mcmeta is a few hundred bytes; anything past this is not one we will parse. */
const MAX_MCMETA_BYTES = 1024 * 1024
/** yauzl reads the central directory in many small pieces; one read-ahead block serves a run of them. */
const READ_AHEAD_BYTES = 1024 * 1024

export interface ArchiveInfo {
  entries: number
  /** From pack.mcmeta at the root; null when absent or unusable. */
  packFormat: number | null
}

/** Opens the stored ZIP and reads its pack.mcmeta. Throws InvalidUpload when it is not a readable ZIP. */
export async function inspectArchive(store: FileStore, key: string, size: number): Promise<ArchiveInfo> {
  let zip: yauzl.ZipFile
  try {
    zip = await yauzl.fromRandomAccessReaderPromise(new StoreReader(store, key, size), size, {
      lazyEntries: true,
      autoClose: false,
      strictFileNames: false,
      validateEntrySizes: true,
    })
  } catch {
    throw new InvalidUpload('the file is not a readable ZIP archive')
  }
  try {
    let entries = 0
    let packFormat: number | null = null
    for await (const entry of readEntries(zip)) {
      entries += 1
      if (entry.fileName === 'pack.mcmeta') packFormat = await readMcmeta(zip, entry)
    }
    return { entries, packFormat }
  } catch (error) {
    if (error instanceof InvalidUpload) throw error
    throw new InvalidUpload('the file is not a readable ZIP archive')
  } finally {
    zip.close()
  }
}

async function* readEntries(zip: yauzl.ZipFile): AsyncGenerator<yauzl.Entry> {
  while (true) {
    const entry = await new Promise<yauzl.Entry | null>((resolve, reject) => {
      const onEntry = (e: yauzl.Entry) => { cleanup(); resolve(e) }
      const onEnd = () => { cleanup(); resolve(null) }
      const onError = (err: Error) => { cleanup(); reject(err) }
      const cleanup = () => {
        zip.off('entry', onEntry)
        zip.off('end', onEnd)
        zip.off('error', onError)
      }
      zip.on('entry', onEntry)
      zip.on('end', onEnd)
      zip.on('error', onError)
      zip.readEntry()
    })
    if (!entry) return
    yield entry
  }
}

/** pack_format of the entry, or null; a broken or huge pack.mcmeta never rejects the upload (CONTRACT §4). */
async function readMcmeta(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<number | null> {
  if (entry.uncompressedSize > MAX_MCMETA_BYTES) return null
  try {
    const stream = await zip.openReadStreamPromise(entry)
    const chunks: Buffer[] = []
    for await (const chunk of stream) chunks.push(chunk as Buffer)
    return packFormatOfText(Buffer.concat(chunks).toString('utf8'))
  } catch {
    return null
  }
}

class StoreReader extends yauzl.RandomAccessReader {
  private block: { start: number; bytes: Buffer } | undefined

  constructor(
    private readonly store: FileStore,
    private readonly key: string,
    private readonly size: number,
  ) {
    super()
  }

  override _readStreamForRange(start: number, end: number): Readable {
    return Readable.from(this.readRange(start, end))
  }

  private async *readRange(start: number, end: number): AsyncGenerator<Buffer> {
    const cached = this.block
    if (cached && start >= cached.start && end <= cached.start + cached.bytes.length) {
      yield cached.bytes.subarray(start - cached.start, end - cached.start)
      return
    }
    if (end - start > READ_AHEAD_BYTES) {
      // Large reads (an entry's data) stream straight through.
      yield* (await this.store.get(this.key, { start, end: end - 1 })) as AsyncIterable<Buffer>
      return
    }
    const blockEnd = Math.min(this.size, start + READ_AHEAD_BYTES)
    const chunks: Buffer[] = []
    for await (const chunk of await this.store.get(this.key, { start, end: blockEnd - 1 })) chunks.push(chunk as Buffer)
    this.block = { start, bytes: Buffer.concat(chunks) }
    yield this.block.bytes.subarray(0, end - start)
  }
}
