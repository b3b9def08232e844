// A local S3-compatible server for tests: s3rver (a Koa app storing objects in
// a temp directory), started in this process on a free port. Tests that run
// on object storage get a fresh bucket each from `s3Bucket()`.
//
// s3rver 3.7 implements multipart upload and ranged GET but not
// AbortMultipartUpload nor ListMultipartUploads; the two are added below
// (against s3rver's own on-disk layout) so the store's abort path is exercised
// and tests can check that no upload is left pending, as on a real S3. It also
// answers `Range: bytes=0-0` with the whole object (it reads the end 0 as
// "no end"); that is corrected below too, since files tests ask for it.
// `{ stock: true }` gives a second server without any of these patches, as
// s3rver ships: the store must work against a server that cannot abort a
// multipart upload (that 405 once hid the real failure).
import fs from 'node:fs'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { Readable } from 'node:stream'
import type S3rver from 's3rver'
import {
  CreateBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3'
import { tempDir } from './temp.js'

/** s3rver's fixed credentials; the SDK reads them from the environment like any AWS credentials. */
const ACCESS_KEY = 'S3RVER'
const SECRET_KEY = 'S3RVER'
const REGION = 'us-east-1'

interface Running {
  endpoint: string
  directory: string
  server: S3rver
}

export interface S3ServerOptions {
  /** s3rver exactly as published, without the patches of this file. */
  stock?: boolean
}

const running = new Map<'patched' | 'stock', Promise<Running>>()

/** True when the tests were asked to run on object storage. */
export function s3Selected(): boolean {
  return process.env.PACKS_TEST_STORAGE === 's3'
}

/** Sets the AWS_* variables the SDK's default credential chain reads. */
export function useS3Credentials(): void {
  process.env.AWS_ACCESS_KEY_ID = ACCESS_KEY
  process.env.AWS_SECRET_ACCESS_KEY = SECRET_KEY
  process.env.AWS_REGION = REGION
  // As src/storage/s3.ts does: no Node 22 notice from the test's own clients either.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
  delete process.env.AWS_SESSION_TOKEN
  delete process.env.AWS_PROFILE
}

/** The shared server of this test process (patched, or stock), started on first use. */
export function s3Server(options: S3ServerOptions = {}): Promise<Running> {
  const variant = options.stock ? 'stock' : 'patched'
  let server = running.get(variant)
  if (!server) {
    server = start({ stock: options.stock ?? false, port: 0, directory: tempDir('packs-s3-') })
    running.set(variant, server)
  }
  return server
}

async function start(options: { stock: boolean; port: number; directory: string }): Promise<Running> {
  useS3Credentials()
  const { directory } = options
  // Loaded here, not at the top: most processes that import this helper (every sqlite one) never start a server.
  const { default: S3rverServer } = await import('s3rver')
  const server = new S3rverServer({ address: '127.0.0.1', port: options.port, silent: true, directory })
  if (!options.stock) {
    addMultipartBookkeeping(server, directory)
    fixFirstByteRange(server)
  }
  await server.run()
  const httpServer = (server as unknown as { httpServer: import('node:http').Server }).httpServer
  // The server must not keep a finished test process alive; its directory goes with the process.
  httpServer.unref()
  process.once('exit', () => fs.rmSync(directory, { recursive: true, force: true }))
  const { port } = httpServer.address() as AddressInfo
  return { endpoint: `http://127.0.0.1:${port}`, directory, server }
}

/** Stops the shared servers and removes their directories (the process exit does it too). */
export async function stopS3Server(): Promise<void> {
  const servers = [...running.values()]
  running.clear()
  for (const starting of servers) {
    const { server, directory } = await starting
    await server.close()
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

/** A server of one test's own, which it may stop and start again (an outage of the object store). */
export interface OwnS3Server {
  endpoint: string
  /** Closes the server; its port and directory (so every bucket and object) are kept for start(). */
  stop(): Promise<void>
  /** Serves the same directory on the same port again. */
  start(): Promise<void>
  /** A fresh, empty bucket on this server (the server must be running). */
  bucket(): Promise<TestBucket>
  /** Stops it for good and removes its directory. */
  close(): Promise<void>
}

export async function ownS3Server(options: S3ServerOptions = {}): Promise<OwnS3Server> {
  const directory = tempDir('packs-s3-own-')
  let current: Running | undefined = await start({ stock: options.stock ?? false, port: 0, directory })
  const endpoint = current.endpoint
  const port = Number(new URL(endpoint).port)
  const stop = async () => {
    const server = current?.server
    current = undefined
    await server?.close()
  }
  return {
    endpoint,
    stop,
    async start() {
      current ??= await start({ stock: options.stock ?? false, port, directory })
    },
    bucket: () => createBucket(endpoint),
    async close() {
      await stop()
      fs.rmSync(directory, { recursive: true, force: true })
    },
  }
}

export interface TestBucket {
  bucket: string
  endpoint: string
  /** STORAGE_URL for this bucket. */
  storageUrl: string
  /** A client for inspecting the bucket; destroy() it when done. */
  client(): S3Client
}

/** Creates a fresh, empty bucket on the shared server (the stock one with `{ stock: true }`). */
export async function s3Bucket(options: S3ServerOptions = {}): Promise<TestBucket> {
  const { endpoint } = await s3Server(options)
  return createBucket(endpoint)
}

async function createBucket(endpoint: string): Promise<TestBucket> {
  const bucket = `packs-${randomUUID().slice(0, 18)}`
  const client = testClient(endpoint)
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }))
  } finally {
    client.destroy()
  }
  return {
    bucket,
    endpoint,
    storageUrl: `s3://${bucket}?endpoint=${encodeURIComponent(endpoint)}&region=${REGION}`,
    client: () => testClient(endpoint),
  }
}

function testClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: ACCESS_KEY, secretAccessKey: SECRET_KEY },
  })
}

/** Every object key in the bucket and every multipart upload still pending (as `pending-upload:<key>`), sorted. */
export async function bucketContents(client: S3Client, bucket: string, prefix = ''): Promise<string[]> {
  const keys: string[] = []
  let token: string | undefined
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }))
    for (const object of page.Contents ?? []) keys.push(object.Key!)
    token = page.IsTruncated ? page.NextContinuationToken : undefined
  } while (token)
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }))
  for (const upload of uploads.Uploads ?? []) keys.push(`pending-upload:${upload.Key}`)
  return keys.sort()
}

type KoaContext = {
  method: string
  path: string
  query: Record<string, string | string[] | undefined>
  status: number
  type: string
  body: unknown
}

/**
 * AbortMultipartUpload (DELETE /bucket/key?uploadId=) and ListMultipartUploads
 * (GET /bucket?uploads) over s3rver's layout: <dir>/<bucket>/._S3rver_uploads/<id>/key.
 * Runs before s3rver's own middleware, which answers both with an error.
 */
function addMultipartBookkeeping(server: S3rver, directory: string): void {
  const middleware = async (ctx: KoaContext, next: () => Promise<void>) => {
    const [bucket, ...keyParts] = ctx.path.split('/').filter(Boolean).map(decodeURIComponent)
    if (!bucket || !/^[a-z0-9.-]+$/.test(bucket)) return next()
    const uploadsDir = path.join(directory, bucket, '._S3rver_uploads')
    const uploadId = ctx.query.uploadId
    if (ctx.method === 'DELETE' && keyParts.length > 0 && typeof uploadId === 'string') {
      if (!/^[0-9a-f]+$/.test(uploadId) || !fs.existsSync(path.join(uploadsDir, uploadId))) {
        ctx.status = 404
        ctx.type = 'application/xml'
        ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified upload does not exist.</Message></Error>'
        return
      }
      fs.rmSync(path.join(uploadsDir, uploadId), { recursive: true, force: true })
      ctx.status = 204
      return
    }
    if (ctx.method === 'GET' && keyParts.length === 0 && 'uploads' in ctx.query) {
      const prefix = typeof ctx.query.prefix === 'string' ? ctx.query.prefix : ''
      const ids = fs.existsSync(uploadsDir) ? fs.readdirSync(uploadsDir) : []
      const uploads = ids
        // The `key` file is written when the upload is initiated: its time is S3's `Initiated`. A part
        // sent after an abort makes s3rver recreate the directory without it: no upload is there.
        .filter((id) => fs.existsSync(path.join(uploadsDir, id, 'key')))
        .map((id) => ({
          id,
          key: fs.readFileSync(path.join(uploadsDir, id, 'key'), 'utf8'),
          initiated: fs.statSync(path.join(uploadsDir, id, 'key')).mtime.toISOString(),
        }))
        .filter((upload) => upload.key.startsWith(prefix))
      const xml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
      ctx.status = 200
      ctx.type = 'application/xml'
      ctx.body = '<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult>'
        + `<Bucket>${xml(bucket)}</Bucket><Prefix>${xml(prefix)}</Prefix><IsTruncated>false</IsTruncated>`
        + uploads.map((u) => `<Upload><Key>${xml(u.key)}</Key><UploadId>${u.id}</UploadId><Initiated>${u.initiated}</Initiated></Upload>`).join('')
        + '</ListMultipartUploadsResult>'
      return
    }
    return next()
  }
  ;(server as unknown as { middleware: unknown[] }).middleware.unshift(middleware)
}

interface S3rverObject { content: Readable | null; range?: { start: number; end: number } }
interface S3rverStore {
  getObject(bucket: string, key: string, options?: { start?: number; end?: number }): Promise<S3rverObject | null>
  getResourcePath(bucket: string, key: string, resource: string): string
}

/** s3rver takes a range end of 0 for "to the end"; serve exactly the first byte instead. */
function fixFirstByteRange(server: S3rver): void {
  const store = (server as unknown as { store: S3rverStore }).store
  const original = store.getObject.bind(store)
  store.getObject = async (bucket, key, options) => {
    const object = await original(bucket, key, options)
    if (options?.end === 0 && object?.content && object.range) {
      object.content.destroy()
      object.content = fs.createReadStream(store.getResourcePath(bucket, key, 'object'), { start: 0, end: 0 })
      object.range.end = 0
    }
    return object
  }
}
