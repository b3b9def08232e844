// backends: sqlite — the walkthrough is the start with no configuration at all: SQLite and files in the data directory
// End to end, as an operator and a pack author would do it: start the real
// server with `npm start`'s command and no configuration, read the site password
// it prints once, create a user (`npx packs`, a real process) and a token with
// the admin CLI, then with a real HTTP client upload a thumbnail and a version,
// save and reload the draft, publish it, and fetch the pack through the
// update-check the in-game mod uses.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import { datapack, png } from '../helpers/fixtures.js'
import { cliOk, lastLine, startExpectingFailure, startServer, tempDataDir, type RunningServer } from '../helpers/server.js'

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')

const SITE_PASSWORD_LINE = /^ {2}Site password: (\S+)$/m
/** Fastify's line once the server listens: the password, if any, is printed before it, on the same stream. */
const LISTENING_LINE = /"msg":"Server listening at /

interface TempUpload {
  uuid: string
  kind: string
  filename: string
  content_type: string
  url: string
}

async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text()
  assert.equal(res.status, status, `${res.url}: expected ${status}, got ${res.status}: ${text}`)
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `${res.url} answers JSON`)
  return JSON.parse(text) as T
}

describe('walkthrough: npm start, CLI, upload, draft, publish, update-check, download', { timeout: 180_000 }, () => {
  const dataDir = tempDataDir()
  const username = 'Alice_E2E'
  const draft = randomUUID()
  const title = 'Sky Islands'
  let sitePassword = ''
  let server: RunningServer
  let token = ''
  let headers: Record<string, string> = {}
  let versionZip: Buffer
  const thumbnail = png(4, 4, [10, 200, 30])

  before(async () => {
    versionZip = await datapack(48)
  })

  after(async () => {
    if (server) await server.stop().catch(() => undefined)
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  test('the first start without PACKS_MASTER_PASSWORD prints a generated site password once', async () => {
    const first = await startServer({ dataDir, env: { PACKS_MASTER_PASSWORD: undefined } })
    try {
      // The password line is written before the server listens, but stdout and the
      // health check travel on different pipes: wait for the listening line behind it.
      await first.waitForStdout(LISTENING_LINE)
      const match = SITE_PASSWORD_LINE.exec(first.stdout())
      assert.ok(match, `stdout has a "  Site password: <pw>" line:\n${first.stdout()}`)
      sitePassword = match[1]!
      assert.ok(sitePassword.length >= 12, 'the generated password is not trivially short')
      assert.equal(first.stdout().split(sitePassword).length - 1, 1, 'the password appears exactly once in the output')
      assert.ok(!first.stderr().includes(sitePassword), 'the password is not written to stderr')

      const closed = await fetch(`${first.url}/api/schema/`)
      await closed.arrayBuffer()
      assert.equal(closed.status, 401, 'the gate is closed without the password')
      const open = await fetch(`${first.url}/api/schema/`, { headers: { 'x-master-password': sitePassword } })
      await open.arrayBuffer()
      assert.equal(open.status, 200, 'the printed password opens the gate')
    } finally {
      assert.deepEqual(await first.stop(), { code: 0, signal: null }, 'SIGTERM shuts the server down with exit code 0')
    }
  })

  test('a second start on the same data dir prints no password, and the first one still works', async () => {
    assert.ok(sitePassword, 'the first start produced a password')
    server = await startServer({ dataDir, env: { PACKS_MASTER_PASSWORD: undefined } })
    await server.waitForStdout(LISTENING_LINE)
    assert.doesNotMatch(server.stdout(), /Site password/, 'no password is printed on a later start')
    assert.ok(!server.stdout().includes(sitePassword))

    const gateOnly = await fetch(`${server.url}/api/schema/`, { headers: { 'x-master-password': sitePassword } })
    await gateOnly.arrayBuffer()
    assert.equal(gateOnly.status, 200, 'the stored password opens the gate after a restart')
  })

  test('the admin CLI creates a user and prints a token on its last line', async () => {
    await cliOk(['user', 'create', username, '--password', 'correct horse battery staple'], server.env, {}, { process: true })
    const created = await cliOk(['token', 'create', username, '--name', 'e2e'], server.env)
    token = lastLine(created.stdout)
    assert.match(token, /^\S{16,}$/, `a token alone on the last line: ${JSON.stringify(created.stdout)}`)
    headers = { 'x-master-password': sitePassword, authorization: `Bearer ${username} ${token}` }
  })

  let thumbUpload: TempUpload
  let versionUpload: TempUpload

  test('uploads a thumbnail PNG and a version ZIP into the draft', async () => {
    const upload = async (kind: string, bytes: Buffer, filename: string, type: string) => {
      const form = new FormData()
      form.append('kind', kind)
      form.append('draft_uuid', draft)
      form.append('file', new Blob([bytes], { type }), filename)
      return json<TempUpload>(await fetch(`${server.url}/api/uploads/`, { method: 'POST', headers, body: form }), 200)
    }
    thumbUpload = await upload('thumbnail', thumbnail, 'cover.png', 'image/png')
    assert.equal(thumbUpload.kind, 'thumbnail')
    assert.equal(thumbUpload.content_type, 'image/png')
    assert.equal(thumbUpload.filename, 'cover.png')

    // Declared as octet-stream: the server must decide the type from the bytes.
    versionUpload = await upload('version', versionZip, 'sky-islands-1.0.0.zip', 'application/octet-stream')
    assert.equal(versionUpload.kind, 'version')
    assert.equal(versionUpload.content_type, 'application/zip')
    assert.equal(versionUpload.filename, 'sky-islands-1.0.0.zip')
    assert.notEqual(versionUpload.uuid, thumbUpload.uuid)

    // The thumbnail's url serves the same bytes, sandboxed.
    const res = await fetch(new URL(thumbUpload.url, server.url), { headers })
    assert.equal(res.status, 200)
    assert.equal(sha256(new Uint8Array(await res.arrayBuffer())), sha256(thumbnail))
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
  })

  const data = {
    title,
    summary: 'Floating islands in the overworld',
    version_name: '1.0.0',
    changelog: 'First release.\n- islands\n- more islands',
  }

  test('saves the draft and reads it back with its uploads', async () => {
    const saved = await json<{ saved: boolean; updated_at: string }>(await fetch(`${server.url}/api/draft/`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ draft, data }),
    }), 200)
    assert.equal(saved.saved, true)
    assert.match(saved.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)

    const loaded = await json<{ data: unknown; uploads: TempUpload[] }>(
      await fetch(`${server.url}/api/draft/?draft=${draft}`, { headers }), 200)
    assert.deepEqual(loaded.data, data)
    assert.deepEqual(loaded.uploads.map((u) => u.uuid).sort(), [thumbUpload.uuid, versionUpload.uuid].sort())
  })

  let namespace = ''
  let packId = ''

  test('publishes the draft: 201 with the pack, and the draft is consumed', async () => {
    const pack = await json<{ namespace: string; pack_id: string }>(await fetch(`${server.url}/api/draft/publish/`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ draft }),
    }), 201)
    assert.equal(pack.namespace, username.toLowerCase())
    assert.match(pack.pack_id, /^sky[-_]islands$/)
    namespace = pack.namespace
    packId = pack.pack_id

    const gone = await fetch(`${server.url}/api/draft/?draft=${draft}`, { headers })
    assert.equal(gone.status, 404, 'a published draft no longer loads')
    await gone.arrayBuffer()
  })

  let latestEtag = ''
  let downloadUrl = ''

  test('the update-check returns the new version with an absolute download URL', async () => {
    const res = await fetch(`${server.url}/api/packs/${namespace}/${packId}/latest`, { headers })
    latestEtag = res.headers.get('etag') ?? ''
    const latest = await json<Record<string, unknown>>(res, 200)
    assert.equal(latest.namespace, namespace)
    assert.equal(latest.pack_id, packId)
    assert.equal(latest.name, title)
    assert.equal(latest.version, '1.0.0')
    assert.equal(latest.pack_format, 48)
    assert.match(String(latest.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
    assert.equal(typeof latest.download_url, 'string')
    downloadUrl = latest.download_url as string
    assert.ok(downloadUrl.startsWith(`${server.url}/`), `download_url is absolute on this server: ${downloadUrl}`)
    assert.ok(latestEtag, 'the update-check carries an ETag')

    // The in-game updater has only the gate password, no user token.
    const gateOnly = await fetch(`${server.url}/api/packs/${namespace}/${packId}/latest`, {
      headers: { 'x-master-password': sitePassword },
    })
    assert.deepEqual(await json(gateOnly, 200), latest)
  })

  test('If-None-Match with the ETag answers 304 with no body', async () => {
    const res = await fetch(`${server.url}/api/packs/${namespace}/${packId}/latest`, {
      headers: { ...headers, 'if-none-match': latestEtag },
    })
    assert.equal(res.status, 304)
    assert.equal((await res.arrayBuffer()).byteLength, 0)
  })

  test('download_url serves exactly the uploaded ZIP as an attachment', async () => {
    const res = await fetch(downloadUrl, { headers })
    const body = new Uint8Array(await res.arrayBuffer())
    assert.equal(res.status, 200)
    assert.equal(body.byteLength, versionZip.length)
    assert.equal(sha256(body), sha256(versionZip))
    const disposition = res.headers.get('content-disposition') ?? ''
    assert.match(disposition, /^attachment/)
    assert.ok(disposition.includes('sky-islands-1.0.0.zip'), `the stored filename is offered: ${disposition}`)
  })

  test('a wrong gate password gets 401 with a JSON detail', async () => {
    const res = await fetch(`${server.url}/api/packs/${namespace}/${packId}/latest`, {
      headers: { 'x-master-password': `${sitePassword}-wrong` },
    })
    const body = await json<{ detail?: unknown }>(res, 401)
    assert.equal(typeof body.detail, 'string')
    assert.ok(res.headers.get('www-authenticate'), '401 carries WWW-Authenticate')
  })

  test('credentials never reach the log, and SIGTERM shuts down cleanly', async () => {
    const exit = await server.stop()
    assert.deepEqual(exit, { code: 0, signal: null }, `clean exit on SIGTERM; stderr:\n${server.stderr()}`)
    const output = server.stdout() + server.stderr()
    assert.ok(token, 'the walkthrough created a token')
    assert.ok(!output.includes(token), 'the API token is not logged')
    assert.ok(!output.includes(sitePassword), 'the site password is not logged')
  })
})

describe('bad configuration stops start-up with one line on stderr', { timeout: 60_000, concurrency: true }, () => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['PORT=notaport', { PORT: 'notaport' }, /PORT/],
    ['DATABASE_URL=mysql://x', { DATABASE_URL: 'mysql://x' }, /DATABASE_URL/],
  ]
  for (const [name, env, mentions] of cases) {
    test(name, async () => {
      const result = await startExpectingFailure(env)
      assert.notEqual(result.code, 0, 'non-zero exit code')
      assert.ok(result.code !== null, 'exited by itself, not by a signal')
      const lines = result.stderr.split('\n').filter((line) => line !== '')
      assert.equal(lines.length, 1, `exactly one line on stderr:\n${result.stderr}`)
      assert.match(lines[0]!, mentions, 'the line names the bad setting')
      assert.ok(result.stderr.endsWith('\n'))
    })
  }
})
