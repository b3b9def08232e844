import { PassThrough, type Readable } from 'node:stream'
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  S3Client,
  S3ServiceException,
  AbortMultipartUploadCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
} from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { ConfigError, redactUrl } from '../config/index.js'
import { StorageUnavailable } from '../errors.js'
import type { ByteRange, FileStore, PresignOptions, StoredObject, UnfinishedWrite } from './types.js'

const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
// S3's bucket naming rules (3-63 lowercase letters, digits, dots and hyphens).
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/
const KNOWN_PARAMS = new Set(['endpoint', 'region', 'path_style', 'prefix'])

/**
 * The S3 operations Packs can do without (docs/deploy.md lists every one it uses). They are how the
 * consistency check finds and removes the multipart uploads a crash or a cut-off upload left unfinished;
 * a store may lack them (stock s3rver answers ListMultipartUploads with 501 and AbortMultipartUpload with 405).
 */
type OptionalOperation = 'ListMultipartUploads' | 'AbortMultipartUpload'

/** A store's answer that it has no such operation (501 Not Implemented, 405 Method Not Allowed), not a failure of one it has. */
function notOffered(error: unknown): number | undefined {
  if (!(error instanceof S3ServiceException)) return undefined
  const status = error.$metadata.httpStatusCode
  if (status === 501 || status === 405 || error.name === 'NotImplemented' || error.name === 'MethodNotAllowed') return status ?? 501
  return undefined
}

/** 5 MiB is S3's smallest allowed part; with two parts in flight an upload holds about 15 MiB at most. */
export const PART_SIZE = 5 * 1024 * 1024
const QUEUE_SIZE = 2

export interface S3Location {
  bucket: string
  /** Prepended to every key; empty or ending in '/'. */
  prefix: string
  region: string
  endpoint: string | undefined
  pathStyle: boolean
}

/**
 * Reads `s3://bucket?endpoint=http://host:9000&region=us-east-1&path_style=true&prefix=packs/`.
 * Unknown parameters are refused so a typo is not silently ignored.
 */
export function parseS3Url(raw: string, env: NodeJS.ProcessEnv = process.env): S3Location {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(`STORAGE_URL: "${redactUrl(raw)}" is not a valid s3://<bucket>?endpoint=...&region=... URL`)
  }
  const bucket = url.hostname
  if (url.protocol !== 's3:' || !BUCKET_NAME.test(bucket)) {
    throw new ConfigError(`STORAGE_URL: "${redactUrl(raw)}" must name a bucket (3-63 lowercase letters, digits, dots, hyphens): s3://<bucket>?endpoint=...`)
  }
  if (url.username || url.password || url.port || (url.pathname !== '' && url.pathname !== '/')) {
    throw new ConfigError(`STORAGE_URL: "${redactUrl(raw)}" must be s3://<bucket> with options as query parameters (prefix=... for a key prefix; credentials come from AWS_* variables)`)
  }
  for (const name of url.searchParams.keys()) {
    if (!KNOWN_PARAMS.has(name)) throw new ConfigError(`STORAGE_URL: unknown parameter "${name}" (known: ${[...KNOWN_PARAMS].join(', ')})`)
  }
  const params = url.searchParams
  const endpointRaw = params.get('endpoint') ?? undefined
  let endpoint: string | undefined
  if (endpointRaw !== undefined) {
    let parsed: URL | undefined
    try {
      parsed = new URL(endpointRaw)
    } catch {
      parsed = undefined
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !parsed.hostname) {
      throw new ConfigError(`STORAGE_URL: endpoint "${endpointRaw}" must be an http:// or https:// URL`)
    }
    endpoint = endpointRaw
  }
  const pathStyleRaw = params.get('path_style')
  if (pathStyleRaw !== null && pathStyleRaw !== 'true' && pathStyleRaw !== 'false') {
    throw new ConfigError(`STORAGE_URL: path_style must be true or false, not "${pathStyleRaw}"`)
  }
  // Self-hosted S3-compatible servers rarely have wildcard DNS for bucket
  // subdomains, so an explicit endpoint defaults to path-style addressing.
  const pathStyle = pathStyleRaw === null ? endpoint !== undefined : pathStyleRaw === 'true'
  const region = params.get('region') || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1'
  const prefixRaw = (params.get('prefix') ?? '').replace(/^\/+/, '')
  const prefix = prefixRaw === '' || prefixRaw.endsWith('/') ? prefixRaw : `${prefixRaw}/`
  return { bucket, prefix, region, endpoint, pathStyle }
}

/**
 * Files in an S3-compatible object store. A put is a streamed multipart upload
 * (never the whole file in memory) that only becomes an object when it
 * completes; if the source fails the multipart upload is aborted, so nothing
 * appears under the key. Credentials come from the SDK's default chain
 * (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, profiles, ...).
 */
export class S3FileStore implements FileStore {
  readonly location: S3Location
  readonly client: S3Client
  /** The optional operations this store answered it does not have, with the status it answered. */
  private readonly missing = new Map<OptionalOperation, number>()
  private presigner: Promise<typeof import('@aws-sdk/s3-request-presigner')> | undefined

  constructor(location: S3Location) {
    this.location = location
    // The SDK warns once on Node 20 that its releases after January 2027 need
    // Node 22; the lockfile pins this one, and the notice would come before
    // every start-up line. An operator who sets the variable keeps their choice.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
    this.client = new S3Client({
      region: location.region,
      ...(location.endpoint ? { endpoint: location.endpoint } : {}),
      forcePathStyle: location.pathStyle,
      // The SDK's newer default adds CRC32 checksums (and aws-chunked bodies)
      // that many S3-compatible servers do not understand; S3 itself does not need them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // A black-holed endpoint must not hang start-up or a request for minutes.
      requestHandler: { connectionTimeout: 5000 },
    })
  }

  static fromUrl(raw: string): S3FileStore {
    return new S3FileStore(parseS3Url(raw))
  }

  /** The object key a FileStore key is stored under. */
  objectKey(key: string): string {
    if (!SAFE_KEY.test(key)) throw new Error(`invalid storage key: ${key}`)
    return this.location.prefix + key
  }

  /** Fails with one ConfigError line when the bucket is missing, unreachable or not ours. */
  async check(): Promise<void> {
    const { bucket } = this.location
    const where = this.location.endpoint ?? `region ${this.location.region}`
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: bucket }))
    } catch (error) {
      const status = error instanceof S3ServiceException ? error.$metadata.httpStatusCode : undefined
      const err = error as Error & { code?: string }
      let reason: string
      if (status === 404) reason = `bucket "${bucket}" does not exist at ${where}`
      else if (status === 403 || status === 401) reason = `access to bucket "${bucket}" at ${where} was refused (check AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY)`
      else if (err.name === 'CredentialsProviderError') reason = `no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`
      else if (status !== undefined) reason = `bucket "${bucket}" at ${where} answered HTTP ${status}`
      else reason = `cannot reach ${where} for bucket "${bucket}" (${err.code ?? err.name}: ${err.message})`
      throw new ConfigError(`STORAGE_URL: ${reason}`)
    }
    await this.probeOptionalOperations()
  }

  /**
   * Asks once, at start, whether the store has the optional operations, so that without them Packs runs on
   * (nothing else needs them) and the operator is told once what is lost (limitation()), instead of every
   * consistency check and `packs import` failing on the first unfinished-upload listing. A probe that fails
   * otherwise (refused, say) says nothing: the operation is taken to be there, as before.
   */
  private async probeOptionalOperations(): Promise<void> {
    const { bucket, prefix } = this.location
    const probes: [OptionalOperation, () => Promise<unknown>][] = [
      ['ListMultipartUploads', () => this.client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix, MaxUploads: 1 }))],
      // An upload id no store has made: a store with the operation answers 404 NoSuchUpload, and nothing is touched.
      ['AbortMultipartUpload', () => this.client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: `${prefix}packs-probe`, UploadId: 'packs-probe-no-such-upload' }))],
    ]
    for (const [operation, probe] of probes) {
      try {
        await probe()
      } catch (error) {
        const status = notOffered(error)
        if (status !== undefined) this.missing.set(operation, status)
      }
    }
  }

  limitation(): string | null {
    if (this.missing.size === 0) return null
    const names = [...this.missing].map(([operation, status]) => `${operation} (it answered ${status})`)
    return `the object store lacks ${names.join(' and ')}, optional S3 operations: multipart uploads that a crash or a cut-off `
      + 'upload left unfinished cannot be listed and removed by the consistency check, so their parts stay in the bucket, '
      + 'unseen, until the store\'s own tools remove them (an AbortIncompleteMultipartUpload lifecycle rule, where it has one); '
      + 'everything else works'
  }

  /** Unfinished uploads can be neither found nor removed without both operations. */
  private canCleanUp(): boolean {
    return !this.missing.has('ListMultipartUploads') && !this.missing.has('AbortMultipartUpload')
  }

  async put(key: string, body: Readable): Promise<void> {
    const objectKey = this.objectKey(key)
    // lib-storage takes the body's length from whatever fields its Body has
    // (size, length, byteLength, start/end, path); our upload stream's public
    // `size` once made every upload above one part fail. It gets a bare
    // PassThrough instead, so no field of the caller's stream can reach it.
    // pipe(), not pipeline(): lib-storage giving up on the PassThrough must not
    // look like an error of the source (see below).
    const source = new PassThrough()
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key: objectKey, Body: source },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      // Aborted here rather than by lib-storage, whose failed abort (405 from a
      // server without AbortMultipartUpload) would replace the error behind it.
      leavePartsOnError: true,
    })
    // The caller needs the source's own error (e.g. "over the size limit", the
    // client gone) as it is; anything else is the store failing.
    let sourceError: unknown
    const onError = (error: unknown) => {
      sourceError ??= error
      source.destroy(error as Error)
    }
    const onClose = () => {
      if (!body.readableEnded) onError(sourceError ?? new Error('the stream to store was closed before its end'))
    }
    body.once('error', onError)
    body.once('close', onClose)
    body.pipe(source)
    try {
      await upload.done()
    } catch (error) {
      // Our own destroy below is not the source failing.
      body.off('error', onError)
      body.off('close', onClose)
      body.destroy()
      source.destroy()
      await this.abortUpload(objectKey, upload.uploadId)
      if (sourceError !== undefined) throw sourceError
      throw new StorageUnavailable(error)
    } finally {
      body.off('error', onError)
      body.off('close', onClose)
    }
  }

  /**
   * Drops the parts of a multipart upload that will not complete. A failure
   * here is not the caller's error: the parts stay listed as an unfinished
   * upload (listUnfinished) for the consistency check to remove.
   */
  private async abortUpload(objectKey: string, uploadId: string | undefined): Promise<void> {
    if (uploadId === undefined || this.missing.has('AbortMultipartUpload')) return
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.location.bucket, Key: objectKey, UploadId: uploadId }))
    } catch {
      // Left for listUnfinished, as said above.
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const objectKey = this.objectKey(key)
    try {
      const response = await this.client.send(new GetObjectCommand({
        Bucket: this.location.bucket,
        Key: objectKey,
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }))
      return response.Body as Readable
    } catch (error) {
      if (error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.$metadata.httpStatusCode === 404)) {
        // Same shape as a missing local file, which callers already handle.
        throw Object.assign(new Error(`no stored object for ${key}`), { code: 'ENOENT' })
      }
      throw new StorageUnavailable(error)
    }
  }

  async presignGet(key: string, options: PresignOptions): Promise<string> {
    // Loaded at the first redirect: a site that streams its downloads (the default) never needs it.
    this.presigner ??= import('@aws-sdk/s3-request-presigner')
    const { getSignedUrl } = await this.presigner
    const command = new GetObjectCommand({
      Bucket: this.location.bucket,
      Key: this.objectKey(key),
      ResponseContentDisposition: options.contentDisposition,
      ResponseContentType: options.contentType,
    })
    try {
      return await getSignedUrl(this.client, command, { expiresIn: options.seconds })
    } catch (error) {
      // Signing asks nothing of the store; what fails here is finding the credentials.
      throw new StorageUnavailable(error)
    }
  }

  async delete(key: string): Promise<void> {
    const objectKey = this.objectKey(key)
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: objectKey }))
    } catch (error) {
      throw new StorageUnavailable(error)
    }
  }

  async *list(options: { after?: string } = {}): AsyncIterable<StoredObject> {
    const { bucket, prefix } = this.location
    let token: string | undefined
    do {
      // S3 lists in UTF-8 byte order; all our keys share the prefix, so without it the order holds.
      const page = await this.client.send(new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : options.after ? { StartAfter: prefix + options.after } : {}),
      }))
      for (const object of page.Contents ?? []) {
        const key = object.Key?.slice(prefix.length)
        // Deeper "folders" and odd names are not ours: another prefix's site, or someone else's objects.
        if (key === undefined || !SAFE_KEY.test(key)) continue
        yield { key, size: object.Size ?? 0, modifiedAt: object.LastModified ?? new Date() }
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined
    } while (token)
  }

  async *listUnfinished(): AsyncIterable<UnfinishedWrite> {
    // What limitation() tells the operator: without these there is nothing the caller could do with a listing.
    if (!this.canCleanUp()) return
    const { bucket, prefix } = this.location
    let keyMarker: string | undefined
    let uploadIdMarker: string | undefined
    for (;;) {
      let page
      try {
        page = await this.client.send(new ListMultipartUploadsCommand({
          Bucket: bucket,
          Prefix: prefix,
          ...(keyMarker !== undefined ? { KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker } : {}),
        }))
      } catch (error) {
        // A store opened without check() learns it here, once.
        const status = notOffered(error)
        if (status === undefined) throw error
        this.missing.set('ListMultipartUploads', status)
        return
      }
      for (const upload of page.Uploads ?? []) {
        const key = upload.Key?.slice(prefix.length)
        // Without its start time an upload's age is unknown: it is left alone rather than guessed old.
        if (key === undefined || !SAFE_KEY.test(key) || !upload.UploadId || !upload.Initiated) continue
        yield { key, id: upload.UploadId, size: null, modifiedAt: upload.Initiated }
      }
      if (!page.IsTruncated || page.NextKeyMarker === undefined) return
      keyMarker = page.NextKeyMarker
      uploadIdMarker = page.NextUploadIdMarker
    }
  }

  async discardUnfinished(write: UnfinishedWrite): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.location.bucket, Key: this.objectKey(write.key), UploadId: write.id }))
    } catch (error) {
      // Completed or aborted meanwhile (by another instance's check, say): nothing left to drop.
      if (error instanceof S3ServiceException && (error.name === 'NoSuchUpload' || error.$metadata.httpStatusCode === 404)) return
      throw error
    }
  }

  async close(): Promise<void> {
    this.client.destroy()
  }
}
