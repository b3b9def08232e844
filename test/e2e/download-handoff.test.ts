// Downloads whose bytes another engine sends, once Packs has decided the answer (src/files/offload.ts):
//
// 1. Behind nginx (PACKS_ACCEL_REDIRECT), on this machine's disk: a real server behind Debian's nginx with
//    the runbook's internal location (read from docs/deploy.md). Through nginx every answer is Packs' own
//    (bytes, status, headers, 304, 206, 416, the count, a hidden pack's signed link refused), while the
//    server itself sent no body; and the stored files are what nginx's group may read, nothing else.
// 2. That site moved with `packs export` / `packs import` into s3rver exactly as published, which lacks
//    ListMultipartUploads and AbortMultipartUpload: the import succeeds, with one warning saying what is
//    lost, and a server on it starts without "consistency check failed" and says so once.
// 3. On that store with PACKS_S3_REDIRECT: a download is a 302 to a presigned link carrying the file's
//    name and type, whose bytes (whole and ranged) are the upload's; a link past its lifetime is 403.
//
// Each part's store is fixed (local disk, then stock s3rver); the database is the combination's (SQLite,
// or PostgreSQL on the scaled one), so both run on both.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { contentDisposition } from '../../src/files/filenames.js'
import { openFileStore } from '../../src/storage/index.js'
import { png, rawZip } from '../helpers/fixtures.js'
import { accelLocation, proxyLocation, startNginx, type RunningNginx } from '../helpers/nginx.js'
import { s3Bucket, stopS3Server, type TestBucket } from '../helpers/s3.js'
import { cliOk, lastLine, runCli, startServer, suiteBackends, tempDataDir, type RunningServer, type SuiteBackends } from '../helpers/server.js'
import { tempDir } from '../helpers/temp.js'
import { until } from '../helpers/wait.js'

const PASSWORD = 'handoff-site-password'
const GATE = { 'x-master-password': PASSWORD }
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** A version archive of a few hundred KiB whose bytes all differ from their neighbours' (ranges land on real bytes). */
async function bigArchive(): Promise<Buffer> {
  const meta = Buffer.from(JSON.stringify({ pack: { pack_format: 48, description: 'hand-off' } }))
  return rawZip([{ name: 'pack.mcmeta', data: meta }, { name: 'data/handoff/noise.bin', data: randomBytes(300 * 1024) }])
}

interface Published {
  namespace: string
  packId: string
  fileId: string
  fileUrl: string
  archive: Buffer
  filename: string
}

/** Upload, draft, publish through `origin` as alice; the archive's name has a non-ASCII letter, for Content-Disposition. */
async function publish(origin: string, headers: Record<string, string>): Promise<Published> {
  const archive = await bigArchive()
  const filename = 'Grüße-handoff.zip'
  const draft = randomUUID()
  const form = new FormData()
  form.append('kind', 'version')
  form.append('draft_uuid', draft)
  form.append('file', new Blob([archive], { type: 'application/zip' }), filename)
  const uploaded = await fetch(`${origin}/api/uploads/`, { method: 'POST', headers, body: form })
  assert.equal(uploaded.status, 200, await uploaded.clone().text())
  const { url } = (await uploaded.json()) as { url: string }
  const json = { ...headers, 'content-type': 'application/json' }
  const saved = await fetch(`${origin}/api/draft/`, { method: 'POST', headers: json, body: JSON.stringify({ draft, data: { title: 'Hand-off Pack', version_name: '1.0.0' } }) })
  assert.equal(saved.status, 200, await saved.text())
  const published = await fetch(`${origin}/api/draft/publish/`, { method: 'POST', headers: json, body: JSON.stringify({ draft }) })
  assert.equal(published.status, 201, await published.clone().text())
  const pack = (await published.json()) as { namespace: string; pack_id: string }
  const fileUrl = new URL(url, origin).pathname
  return { namespace: pack.namespace, packId: pack.pack_id, fileId: fileUrl.split('/')[3]!, fileUrl, archive, filename }
}

async function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(url, { method, headers: { ...GATE, ...headers }, redirect: 'manual' })
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) }
}

/** The pack's download count, as the API shows it (written in batches, so polled). */
async function downloadsOf(origin: string, pack: Published): Promise<number> {
  const res = await get(`${origin}/api/packs/${pack.namespace}/${pack.packId}/`)
  assert.equal(res.status, 200, res.body.toString())
  return (JSON.parse(res.body.toString()) as { downloads: number }).downloads
}

/** The version archive's signed link (the Modrinth-compatible API's), which opens without the gate while the pack is listed. */
async function signedLink(origin: string, pack: Published): Promise<string> {
  const res = await get(`${origin}/api/modrinth/v2/project/${pack.namespace}:${pack.packId}/version`)
  assert.equal(res.status, 200, res.body.toString())
  const url = (JSON.parse(res.body.toString()) as Array<{ files: Array<{ url: string }> }>)[0]!.files[0]!.url
  const parsed = new URL(url)
  return parsed.pathname + parsed.search
}

/** The JSON log lines of a server's stdout. */
function logLines(server: RunningServer): Array<{ level: number; msg: string }> {
  return server.stdout().split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as { level: number; msg: string })
}

const backendsToRelease: SuiteBackends[] = []
after(async () => {
  for (const backends of backendsToRelease) await backends.release()
  await stopS3Server()
})

/** The combination's database and Redis (a fresh PostgreSQL database on the scaled one), without its store. */
async function databaseOnly(): Promise<Record<string, string | undefined>> {
  const backends = await suiteBackends()
  backendsToRelease.push(backends)
  return { ...backends.env, STORAGE_URL: undefined }
}

describe('downloads whose bytes nginx or the object store sends', () => {
  let accelServer: RunningServer
  let nginx: RunningNginx
  let headers: Record<string, string>
  let pack: Published
  let baseEnv: Record<string, string | undefined>

  before(async () => {
    baseEnv = { ...(await databaseOnly()), PACKS_MASTER_PASSWORD: PASSWORD }
    accelServer = await startServer({ dataDir: tempDataDir(), env: { ...baseEnv, PACKS_ACCEL_REDIRECT: '/_packs_files/' } })
    nginx = await startNginx({ upstream: `127.0.0.1:${accelServer.port}`, server: `${proxyLocation()}\n${accelLocation(path.join(accelServer.dataDir, 'files'))}` })
    await cliOk(['user', 'create', 'alice', '--password', 'alice-password-1'], accelServer.env)
    await cliOk(['user', 'create', 'warden', '--password', 'warden-password-1', '--staff'], accelServer.env)
    const token = lastLine((await cliOk(['token', 'create', 'alice', '--name', 'handoff'], accelServer.env)).stdout)
    headers = { ...GATE, authorization: `Bearer alice ${token}` }
    pack = await publish(nginx.url, headers)
  })
  after(async () => {
    await nginx?.stop()
    await accelServer?.stop()
  })

  describe('behind nginx (PACKS_ACCEL_REDIRECT)', () => {
    test('a download through nginx is the upload, with every header of Packs\' answer; the server itself sent no body', async () => {
      const direct = await get(`${accelServer.url}${pack.fileUrl}?download=1`)
      assert.equal(direct.status, 200)
      assert.equal(direct.body.length, 0, 'the server names the file and sends no byte of it')
      assert.equal(direct.headers.get('content-length'), '0')
      assert.equal(direct.headers.get('x-accel-redirect'), `/_packs_files/${pack.fileId.slice(0, 2)}/${pack.fileId}`)

      const res = await get(`${nginx.url}${pack.fileUrl}?download=1`)
      assert.equal(res.status, 200)
      assert.equal(sha256(res.body), sha256(pack.archive))
      assert.equal(res.headers.get('content-length'), String(pack.archive.length))
      assert.match(String(res.headers.get('server')), /^nginx/)
      assert.equal(res.headers.get('x-accel-redirect'), null, 'nginx keeps the internal path to itself')
      for (const name of ['content-type', 'content-disposition', 'cache-control', 'etag', 'last-modified', 'content-security-policy', 'cross-origin-resource-policy', 'x-content-type-options']) {
        assert.equal(res.headers.get(name), direct.headers.get(name), name)
      }
      assert.equal(res.headers.get('etag'), `"${sha256(pack.archive)}"`)
      assert.equal(res.headers.get('content-type'), 'application/octet-stream')
      assert.equal(res.headers.get('content-disposition'), contentDisposition('attachment', pack.filename))
      assert.equal(res.headers.get('accept-ranges'), 'bytes')

      const inline = await get(`${nginx.url}${pack.fileUrl}`)
      assert.equal(inline.status, 200)
      assert.equal(sha256(inline.body), sha256(pack.archive))
      assert.equal(inline.headers.get('content-type'), 'application/zip')
      assert.equal(inline.headers.get('content-disposition'), contentDisposition('inline', pack.filename))
    })

    test('ranges through nginx: 206 with the same bytes, If-Range judged as Packs judges it; what nginx would judge otherwise Packs sends', async () => {
      const size = pack.archive.length
      const etag = `"${sha256(pack.archive)}"`
      const lastModified = (await get(`${nginx.url}${pack.fileUrl}`, {}, 'HEAD')).headers.get('last-modified')!
      // What is sent, the status, and the bytes as [start, end) of the file.
      const cases: Array<[string, Record<string, string>, number, [number, number]]> = [
        ['a middle range', { range: 'bytes=1000-1999' }, 206, [1000, 2000]],
        ['to the end', { range: `bytes=${size - 100}-` }, 206, [size - 100, size]],
        ['a suffix', { range: 'bytes=-77' }, 206, [size - 77, size]],
        ['If-Range with the ETag', { range: 'bytes=5-9', 'if-range': etag }, 206, [5, 10]],
        ['If-Range with the date', { range: 'bytes=5-9', 'if-range': lastModified }, 206, [5, 10]],
        ['If-Range no longer holding', { range: 'bytes=5-9', 'if-range': '"another"' }, 200, [0, size]],
        ['several ranges', { range: 'bytes=0-1,5-6' }, 200, [0, size]],
        ['a malformed range', { range: 'bytes=9-5' }, 200, [0, size]],
        ['an end past 2^63', { range: 'bytes=10-99999999999999999999' }, 206, [10, size]],
        ['If-Match', { 'if-match': etag }, 200, [0, size]],
        ['If-Modified-Since', { 'if-modified-since': lastModified }, 200, [0, size]],
        ['If-Unmodified-Since', { 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' }, 200, [0, size]],
      ]
      for (const [what, sent, status, [start, end]] of cases) {
        const res = await get(`${nginx.url}${pack.fileUrl}?download=1`, sent)
        assert.equal(res.status, status, what)
        assert.equal(sha256(res.body), sha256(pack.archive.subarray(start, end)), what)
        if (status === 206) assert.equal(res.headers.get('content-range'), `bytes ${start}-${end - 1}/${size}`, what)
        assert.equal(res.headers.get('etag'), etag, what)
      }
      const unsatisfiable = await get(`${nginx.url}${pack.fileUrl}?download=1`, { range: `bytes=${size}-` })
      assert.equal(unsatisfiable.status, 416)
      assert.equal(unsatisfiable.headers.get('content-range'), `bytes */${size}`)
      assert.match(String((JSON.parse(unsatisfiable.body.toString()) as { detail: string }).detail), /range not satisfiable/)
      const notModified = await get(`${nginx.url}${pack.fileUrl}?download=1`, { 'if-none-match': etag })
      assert.equal(notModified.status, 304)
      assert.equal(notModified.body.length, 0)
      const head = await get(`${nginx.url}${pack.fileUrl}?download=1`, {}, 'HEAD')
      assert.equal(head.status, 200)
      assert.equal(head.headers.get('content-length'), String(size))
    })

    test('a download through nginx is counted; a hidden pack\'s signed link is refused through it, and opens again once shown', async () => {
      const link = await signedLink(nginx.url, pack)
      const open = await fetch(`${nginx.url}${link}`)
      assert.equal(open.status, 200)
      assert.equal(sha256(Buffer.from(await open.arrayBuffer())), sha256(pack.archive))
      await until(async () => ((await downloadsOf(nginx.url, pack)) >= 1 ? true : undefined), 'the download through nginx to be counted')

      await cliOk(['pack', 'hide', `${pack.namespace}:${pack.packId}`, '--reason', 'hand-off test'], accelServer.env)
      const hidden = await fetch(`${nginx.url}${link}`)
      assert.equal(hidden.status, 404)
      assert.match(((await hidden.json()) as { detail: string }).detail, /file not found/)
      await cliOk(['pack', 'unhide', `${pack.namespace}:${pack.packId}`], accelServer.env)
      assert.equal((await fetch(`${nginx.url}${link}`).then(async (res) => { await res.arrayBuffer(); return res.status })), 200)
    })

    test('the stored files: the store\'s group may read them and pass through to them; the database stays the owner\'s', () => {
      const dataDir = accelServer.dataDir
      const store = path.join(dataDir, 'files')
      const group = fs.statSync(store).gid
      const mode = (file: string) => fs.statSync(file).mode & 0o777
      const stored = path.join(store, pack.fileId.slice(0, 2), pack.fileId)
      assert.equal(mode(stored), 0o640)
      assert.equal(fs.statSync(stored).gid, group)
      assert.equal(mode(path.dirname(stored)), 0o710)
      assert.equal(mode(store), 0o710)
      assert.equal(mode(dataDir), 0o710, 'the store is inside the data directory: its group passes through it')
      for (const name of fs.readdirSync(dataDir).filter((n) => n.startsWith('packs.db'))) assert.equal(mode(path.join(dataDir, name)), 0o600, name)
    })

    test('a row whose bytes are gone is Packs\' 404 through nginx, and its log line', async () => {
      const form = new FormData()
      form.append('kind', 'media')
      form.append('file', new Blob([png(32, 32, [1, 2, 3])], { type: 'image/png' }), 'gone.png')
      const uploaded = await fetch(`${nginx.url}/api/uploads/`, { method: 'POST', headers, body: form })
      assert.equal(uploaded.status, 200)
      const { url: fileUrl, uuid } = (await uploaded.json()) as { url: string; uuid: string }
      const url = new URL(fileUrl, nginx.url).pathname
      const id = url.split('/')[3]!
      fs.rmSync(path.join(accelServer.dataDir, 'files', id.slice(0, 2), id))
      const res = await get(`${nginx.url}${url}`)
      assert.equal(res.status, 404)
      assert.match(String((JSON.parse(res.body.toString()) as { detail: string }).detail), /file not found/)
      await accelServer.waitForStdout(/stored file is missing its bytes/)
      // The site moves on below: its upload goes, with the row that names no bytes.
      const removed = await fetch(`${nginx.url}/api/uploads/${uuid}/delete/`, { method: 'POST', headers })
      assert.equal(removed.status, 200, await removed.text())
    })
  })

  describe('moved into a store without the optional S3 operations, then redirecting to it (PACKS_S3_REDIRECT)', () => {
    let bucket: TestBucket
    let target: Record<string, string | undefined>
    let s3Server: RunningServer

    before(async () => {
      await nginx.stop()
      await accelServer.stop()
      bucket = await s3Bucket({ stock: true })
      target = { ...(await databaseOnly()), PACKS_MASTER_PASSWORD: PASSWORD, PACKS_DATA_DIR: tempDataDir(), STORAGE_URL: bucket.storageUrl }
    })
    after(() => s3Server?.stop())

    test('packs import into stock s3rver succeeds, and packs doctor on it, each with one warning naming what the store lacks and what is lost', async () => {
      const dir = path.join(tempDir('packs-handoff-export-'), 'export')
      await cliOk(['export', dir], accelServer.env)
      const result = await runCli(['import', dir], undefined, { ...target, PACKS_MASTER_PASSWORD: undefined })
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stdout, /^imported \d+ rows and \d+ files/)
      const warnings = result.stderr.split('\n').filter((line) => line !== '')
      assert.equal(warnings.length, 1, result.stderr)
      assert.match(warnings[0]!, /^packs: warning: the object store lacks ListMultipartUploads \(it answered 501\) and AbortMultipartUpload \(it answered 405\)/)
      assert.match(warnings[0]!, /cannot be listed and removed by the consistency check/)
      // The consistency check on it says the same once, and finds nothing wrong.
      const doctor = await runCli(['doctor'], undefined, { ...target, PACKS_MASTER_PASSWORD: undefined })
      assert.equal(doctor.code, 0, doctor.stderr + doctor.stdout)
      assert.deepEqual(doctor.stderr.split('\n').filter((line) => line !== ''), warnings)
      const store = await openFileStore(bucket.storageUrl)
      try {
        const chunks: Buffer[] = []
        for await (const chunk of await store.get(pack.fileId)) chunks.push(chunk as Buffer)
        assert.equal(sha256(Buffer.concat(chunks)), sha256(pack.archive))
      } finally {
        await store.close()
      }
    })

    test('a server on it starts without "consistency check failed", saying once what the store lacks', async () => {
      s3Server = await startServer({ dataDir: target.PACKS_DATA_DIR, env: { ...target, PACKS_S3_REDIRECT: 'on', PACKS_TRUST_PROXY: '127.0.0.1' } })
      await s3Server.waitForStdout(/"msg":"consistency check: /, 30_000)
      const lines = logLines(s3Server)
      assert.deepEqual(lines.filter((line) => /consistency check failed/.test(line.msg)), [])
      const lacking = lines.filter((line) => /the object store lacks/.test(line.msg))
      assert.equal(lacking.length, 1, JSON.stringify(lacking))
      assert.equal(lacking[0]!.level, 40)
      assert.match(lacking[0]!.msg, /^packs: the object store lacks ListMultipartUploads \(it answered 501\) and AbortMultipartUpload \(it answered 405\)/)
    })

    test('a download is a 302 to a presigned link that carries the file\'s name and type; its bytes are the upload\'s, whole and ranged', async () => {
      const res = await get(`${s3Server.url}${pack.fileUrl}?download=1`)
      assert.equal(res.status, 302)
      assert.equal(res.body.length, 0)
      assert.equal(res.headers.get('cache-control'), 'no-store')
      assert.equal(res.headers.get('etag'), null)
      const location = new URL(res.headers.get('location')!)
      assert.equal(location.origin, bucket.endpoint)
      assert.equal(location.searchParams.get('response-content-disposition'), contentDisposition('attachment', pack.filename))
      assert.equal(location.searchParams.get('response-content-type'), 'application/octet-stream')
      assert.equal(location.searchParams.get('X-Amz-Expires'), '300')

      // Followed as a browser or curl -L does: no gate, no credentials, to the store.
      const whole = await fetch(location)
      assert.equal(whole.status, 200)
      assert.equal(sha256(Buffer.from(await whole.arrayBuffer())), sha256(pack.archive))
      assert.equal(whole.headers.get('content-disposition'), contentDisposition('attachment', pack.filename))
      assert.equal(whole.headers.get('content-type'), 'application/octet-stream')

      const ranged = await fetch(`${s3Server.url}${pack.fileUrl}?download=1`, { headers: { ...GATE, range: 'bytes=1000-1999' } })
      assert.equal(ranged.status, 206, 'fetch follows the 302 with the Range to the store')
      assert.equal(ranged.headers.get('content-range'), `bytes 1000-1999/${pack.archive.length}`)
      assert.equal(sha256(Buffer.from(await ranged.arrayBuffer())), sha256(pack.archive.subarray(1000, 2000)))

      const inline = await get(`${s3Server.url}${pack.fileUrl}`)
      assert.equal(inline.status, 302)
      assert.equal(new URL(inline.headers.get('location')!).searchParams.get('response-content-type'), 'application/zip')

      // Decided by Packs before any redirect.
      assert.equal((await get(`${s3Server.url}${pack.fileUrl}?download=1`, { 'if-none-match': `"${sha256(pack.archive)}"` })).status, 304)
      assert.equal((await get(`${s3Server.url}${pack.fileUrl}?download=1`, { range: `bytes=${pack.archive.length}-` })).status, 416)
      const head = await get(`${s3Server.url}${pack.fileUrl}?download=1`, {}, 'HEAD')
      assert.equal(head.status, 200, 'HEAD is answered from the row')
      assert.equal(head.headers.get('content-length'), String(pack.archive.length))
      assert.equal((await get(`${s3Server.url}${pack.fileUrl}?download=1`, { 'x-master-password': 'wrong' })).status, 401)
    })

    test('a redirected download is counted; a hidden pack\'s signed link is refused before any redirect', async () => {
      const counted = await downloadsOf(s3Server.url, pack)
      // Another client (through a trusted proxy): the moved site has counted 127.0.0.1 today already.
      const res = await fetch(`${s3Server.url}${pack.fileUrl}?download=1`, { headers: { ...GATE, 'x-forwarded-for': '203.0.113.7' }, redirect: 'manual' })
      assert.equal(res.status, 302)
      await until(async () => ((await downloadsOf(s3Server.url, pack)) === counted + 1 ? true : undefined), 'the redirected download to be counted')

      const link = await signedLink(s3Server.url, pack)
      assert.equal((await fetch(`${s3Server.url}${link}`, { redirect: 'manual' })).status, 302)
      await cliOk(['pack', 'hide', `${pack.namespace}:${pack.packId}`, '--reason', 'hand-off test'], s3Server.env)
      const hidden = await fetch(`${s3Server.url}${link}`, { redirect: 'manual' })
      assert.equal(hidden.status, 404)
      assert.equal(hidden.headers.get('location'), null)
      await cliOk(['pack', 'unhide', `${pack.namespace}:${pack.packId}`], s3Server.env)
    })

    test('a link past its lifetime is refused by the store (PACKS_S3_REDIRECT_TTL=1s)', async () => {
      // The same site (on SQLite, the same file: one server at a time).
      await s3Server.stop()
      const short = await startServer({ dataDir: target.PACKS_DATA_DIR, env: { ...target, PACKS_S3_REDIRECT: 'on', PACKS_S3_REDIRECT_TTL: '1s' } })
      try {
        const res = await get(`${short.url}${pack.fileUrl}?download=1`)
        assert.equal(res.status, 302)
        const location = res.headers.get('location')!
        assert.equal(new URL(location).searchParams.get('X-Amz-Expires'), '1')
        await sleep(2500)
        const expired = await fetch(location)
        assert.equal(expired.status, 403)
        assert.match(await expired.text(), /AccessDenied[\s\S]*expired/)
      } finally {
        await short.stop()
      }
    })
  })
})
