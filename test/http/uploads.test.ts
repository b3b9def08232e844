import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes, randomUUID } from 'node:crypto'
import { Readable, Writable } from 'node:stream'
import { requireUser } from '../../src/accounts/users-service.js'
import { findOwnedDraft } from '../../src/drafts/repository.js'
import { listDraftUploads } from '../../src/uploads/repository.js'
import { sweepExpired } from '../../src/maintenance/sweep.js'
import { StorageUnavailable } from '../../src/errors.js'
import { expectError, makeSite, siteWith, storedFiles, type SiteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, gif, jpeg, mp4, multipart, png, webm, webp, zip, type Part } from '../helpers/fixtures.js'
import { publishPack } from '../helpers/packs.js'

interface TempUpload {
  uuid: string
  kind: string
  filename: string
  content_type: string
  url: string
}

function post(site: TestSite, headers: Record<string, string>, parts: Part[]) {
  const form = multipart(parts)
  return site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...headers, ...form.headers }, payload: form.payload })
}

function postRaw(site: TestSite, headers: Record<string, string>, payload: Buffer | string | Readable) {
  return site.app.inject({ method: 'POST', url: '/api/uploads/', headers, payload })
}

/** What the site keeps: bytes on disk and rows. A rejected upload must change none of it. */
async function kept(site: TestSite) {
  const count = async (table: 'files' | 'uploads') =>
    Number((await site.app.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)
  const [files, fileRows, uploadRows] = await Promise.all([storedFiles(site), count('files'), count('uploads')])
  return { files, fileRows, uploadRows }
}

async function expectRejected(site: TestSite, send: () => Promise<Awaited<ReturnType<typeof post>>>, status: number, detail?: RegExp) {
  const before = await kept(site)
  const res = await send()
  expectError(res, status, detail)
  assert.deepEqual(await kept(site), before, 'nothing kept after a rejected upload')
  return res
}

const file = (value: Buffer, filename = 'upload.bin', contentType?: string): Part => ({ name: 'file', value, filename, contentType })
const kindField = (kind: string): Part => ({ name: 'kind', value: kind })

describe('POST /api/uploads/', () => {
  let site: TestSite
  let alice: TestUser
  let bob: TestUser

  before(async () => ({ site, alice, bob } = await siteWith({ users: ['alice', 'bob'] })))
  after(() => site.close())

  describe('accepted types per kind, decided from the bytes', () => {
    const cases: [string, () => Buffer | Promise<Buffer>, string][] = [
      ['thumbnail', png, 'image/png'],
      ['thumbnail', jpeg, 'image/jpeg'],
      ['thumbnail', gif, 'image/gif'],
      ['thumbnail', webp, 'image/webp'],
      ['media', mp4, 'video/mp4'],
      ['media', webm, 'video/webm'],
      ['media', png, 'image/png'],
      ['media', jpeg, 'image/jpeg'],
      ['media', gif, 'image/gif'],
      ['media', webp, 'image/webp'],
      ['version', () => datapack(48), 'application/zip'],
    ]
    for (const [kind, make, type] of cases) {
      test(`${kind}: ${type}`, async () => {
        const bytes = await make()
        // The declared type and name are deliberately wrong: only the bytes count.
        const res = await post(site, alice.headers, [kindField(kind), file(bytes, 'whatever.txt', 'text/plain')])
        assert.equal(res.statusCode, 200, res.body)
        const body = res.json() as TempUpload
        assert.equal(body.kind, kind)
        assert.equal(body.content_type, type)
        assert.equal(body.filename, 'whatever.txt')
        assert.match(body.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        const served = await site.app.inject({ method: 'GET', url: body.url, headers: site.gate })
        assert.equal(served.statusCode, 200)
        assert.ok(served.rawPayload.equals(bytes), 'the url serves the uploaded bytes')
        assert.equal(served.headers['content-type'], type)
      })
    }
  })

  test('the response is a TempUpload whose url is /api/files/<id>/ of a file distinct from the upload id', async () => {
    const res = await post(site, alice.headers, [file(png(), 'pic.png')])
    const body = res.json() as TempUpload
    assert.deepEqual(Object.keys(body).sort(), ['content_type', 'filename', 'kind', 'url', 'uuid'])
    const match = /^\/api\/files\/([0-9a-f-]{36})\/$/.exec(body.url)
    assert.ok(match, body.url)
    const row = await site.app.db.selectFrom('uploads').selectAll().where('id', '=', body.uuid).executeTakeFirstOrThrow()
    assert.equal(row.file_id, match[1])
    assert.equal(row.user_id, (await requireUser(site.app.db, 'alice')).id)
    assert.equal(row.draft_id, null)
  })

  test('kind defaults to media', async () => {
    const res = await post(site, alice.headers, [file(mp4(), 'clip.mp4')])
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((res.json() as TempUpload).kind, 'media')
    // And a default-kind ZIP is judged as media, so refused.
    await expectRejected(site, () => post(site, alice.headers, [file(Buffer.from('PK\x05\x06' + '\0'.repeat(18), 'binary'), 'a.zip')]), 400)
  })

  test('kind may come after the file', async () => {
    const res = await post(site, alice.headers, [file(png(), 'late.png'), kindField('thumbnail')])
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((res.json() as TempUpload).kind, 'thumbnail')
    // The type check uses the late kind too.
    await expectRejected(site, () => post(site, alice.headers, [file(png(), 'late.png'), kindField('version')]), 400, /ZIP/)
  })

  test('version archives: pack_format from pack.mcmeta is kept; a missing or broken pack.mcmeta does not reject', async () => {
    const packFormatOf = async (bytes: Buffer) => {
      const res = await post(site, alice.headers, [kindField('version'), file(bytes, 'pack.zip')])
      assert.equal(res.statusCode, 200, res.body)
      const row = await site.app.db.selectFrom('uploads').select('pack_format').where('id', '=', (res.json() as TempUpload).uuid).executeTakeFirstOrThrow()
      return row.pack_format
    }
    assert.equal(await packFormatOf(await datapack(61)), 61)
    assert.equal(await packFormatOf(await zip({ 'pack.mcmeta': JSON.stringify({ pack: { min_format: [88, 0], max_format: [94, 1] } }) })), 94)
    assert.equal(await packFormatOf(await datapack(null)), null)
    assert.equal(await packFormatOf(await zip({ 'pack.mcmeta': '{ not json', 'data/x.txt': 'x' })), null)
    // Only the archive's root pack.mcmeta counts.
    assert.equal(await packFormatOf(await zip({ 'nested/pack.mcmeta': JSON.stringify({ pack: { pack_format: 5 } }) })), null)
  })

  describe('rejected combinations leave nothing behind', () => {
    const text = Buffer.from('this is plain text, not an image\n'.repeat(20))
    const cases: [string, string, () => Buffer | Promise<Buffer>, string?][] = [
      ['mp4 as thumbnail', 'thumbnail', mp4],
      ['webm as thumbnail', 'thumbnail', webm],
      ['PNG as version', 'version', png],
      ['MP4 as version', 'version', mp4],
      ['text named .png declared image/png, as thumbnail', 'thumbnail', () => text, 'image/png'],
      ['text named .png declared image/png, as media', 'media', () => text, 'image/png'],
      ['ZIP as media', 'media', () => datapack(48)],
      ['ZIP as thumbnail', 'thumbnail', () => datapack(48)],
      ['empty file as media', 'media', () => Buffer.alloc(0)],
      ['empty file as version', 'version', () => Buffer.alloc(0)],
      ['corrupt ZIP with a PK header', 'version', () => Buffer.concat([Buffer.from('PK\x03\x04', 'binary'), randomBytes(300)])],
      ['ZIP cut short (no central directory)', 'version', async () => (await datapack(48)).subarray(0, 60)],
      ['SVG (scripts) as media', 'media', () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')],
      ['HTML as media', 'media', () => Buffer.from('<!doctype html><script>alert(1)</script>')],
    ]
    for (const [name, kind, make, declared] of cases) {
      test(name, async () => {
        const bytes = await make()
        const res = await expectRejected(site, () => post(site, alice.headers, [kindField(kind), file(bytes, 'file.png', declared ?? 'image/png')]), 400)
        if (bytes.length > 0 && kind !== 'version') assert.match(res.json().detail as string, new RegExp(kind))
      })
    }
  })

  test('the filename is the base name without path parts or control characters', async () => {
    const names: [string, string][] = [
      ['../../evil\u0007.png', 'evil.png'],
      ['C:\\Users\\me\\shot.png', 'shot.png'],
      ['\u202egnp.exe', 'gnp.exe'],
      ['..', 'file'],
    ]
    for (const [sent, expected] of names) {
      const res = await post(site, alice.headers, [file(png(), sent)])
      assert.equal(res.statusCode, 200, res.body)
      assert.equal((res.json() as TempUpload).filename, expected, JSON.stringify(sent))
    }
  })

  test('content_type is detected, never the declared one', async () => {
    const res = await post(site, alice.headers, [kindField('media'), file(webm(), 'movie.mp4', 'video/mp4')])
    assert.equal((res.json() as TempUpload).content_type, 'video/webm')
  })

  describe('form errors: 400, nothing kept', () => {
    test('missing file part', async () => {
      await expectRejected(site, () => post(site, alice.headers, [kindField('media')]), 400, /file/)
      await expectRejected(site, () => post(site, alice.headers, []), 400, /file/)
    })

    test('"file" sent as a text field', async () => {
      await expectRejected(site, () => post(site, alice.headers, [{ name: 'file', value: 'not a file' }]), 400, /file/)
    })

    test('a file under another part name', async () => {
      await expectRejected(site, () => post(site, alice.headers, [{ name: 'image', value: png(), filename: 'a.png' }]), 400, /file/)
    })

    test('a second file', async () => {
      await expectRejected(site, () => post(site, alice.headers, [file(png(), 'a.png'), file(png(), 'b.png')]), 400, /one file/)
    })

    test('unknown kind, before or after the file', async () => {
      await expectRejected(site, () => post(site, alice.headers, [kindField('avatar'), file(png())]), 400, /kind/)
      await expectRejected(site, () => post(site, alice.headers, [file(png()), kindField('Thumbnail')]), 400, /kind/)
      await expectRejected(site, () => post(site, alice.headers, [file(png()), kindField('')]), 400, /kind/)
    })

    test('too many parts, and a field declared JSON that is not', async () => {
      const many = Array.from({ length: 20 }, (_, i): Part => ({ name: `note${i}`, value: 'x' }))
      await expectRejected(site, () => post(site, alice.headers, [file(png()), ...many]), 400, /too many/)
      const form = multipart([file(png())]).payload.toString('latin1')
      const boundary = form.slice(2, form.indexOf('\r\n'))
      const jsonField = `--${boundary}\r\nContent-Disposition: form-data; name="kind"\r\nContent-Type: application/json\r\n\r\n{oops\r\n`
      await expectRejected(site, () => postRaw(site, { ...alice.headers, 'content-type': `multipart/form-data; boundary=${boundary}` }, Buffer.from(jsonField + form, 'latin1')), 400, /JSON/)
    })

    test('kind given twice', async () => {
      await expectRejected(site, () => post(site, alice.headers, [kindField('media'), file(png()), kindField('thumbnail')]), 400, /kind/)
    })

    test('malformed draft_uuid, before or after the file', async () => {
      await expectRejected(site, () => post(site, alice.headers, [{ name: 'draft_uuid', value: 'draft-1' }, file(png())]), 400, /draft_uuid/)
      await expectRejected(site, () => post(site, alice.headers, [file(png()), { name: 'draft_uuid', value: `${randomUUID()}x` }]), 400, /draft_uuid/)
    })

    test('not multipart at all', async () => {
      await expectRejected(site, () => postRaw(site, { ...alice.headers, 'content-type': 'application/json' }, '{"kind":"media"}'), 400)
      await expectRejected(site, () => postRaw(site, { ...alice.headers, 'content-type': 'application/x-www-form-urlencoded' }, 'kind=media'), 400)
      await expectRejected(site, () => site.app.inject({ method: 'POST', url: '/api/uploads/', headers: alice.headers }), 400)
    })

    test('multipart without a boundary', async () => {
      const { payload } = multipart([file(png())])
      await expectRejected(site, () => postRaw(site, { ...alice.headers, 'content-type': 'multipart/form-data' }, payload), 400)
    })

    test('a body that does not match its boundary', async () => {
      const { payload } = multipart([file(png())], 'aaaaaaaa')
      await expectRejected(site, () => postRaw(site, { ...alice.headers, 'content-type': 'multipart/form-data; boundary=bbbbbbbb' }, payload), 400)
    })

    test('a body cut off in the middle of the file', async () => {
      const big = Buffer.concat([png(), randomBytes(64 * 1024)])
      const { payload, headers } = multipart([kindField('media'), file(big, 'big.png')])
      await expectRejected(site, () => postRaw(site, { ...alice.headers, ...headers }, payload.subarray(0, payload.length / 2)), 400, /multipart/)
    })

    test('a body cut off after the file, inside a later field', async () => {
      const { payload, headers } = multipart([file(png(), 'a.png'), kindField('thumbnail')])
      // Drop the closing boundary and the field's end: what is left still parses as a shorter form.
      const cut = payload.subarray(0, payload.indexOf(Buffer.from('thumbnail')) + 5)
      await expectRejected(site, () => postRaw(site, { ...alice.headers, ...headers }, cut), 400, /multipart/)
    })

    test('a complete form without its closing boundary', async () => {
      const { payload, headers } = multipart([kindField('media'), file(png(), 'a.png')])
      const cut = payload.subarray(0, payload.lastIndexOf(Buffer.from('\r\n--')))
      await expectRejected(site, () => postRaw(site, { ...alice.headers, ...headers }, cut), 400, /multipart/)
    })

    test('garbage with a multipart content type', async () => {
      await expectRejected(site, () => postRaw(site, { ...alice.headers, 'content-type': 'multipart/form-data; boundary=xyz' }, randomBytes(2000)), 400)
    })
  })

  test('a body arriving in tiny chunks is read whole (the closing boundary may straddle chunks)', async () => {
    for (const size of [1, 7, 50]) {
      const { payload, headers } = multipart([kindField('thumbnail'), file(png(), 'chunked.png')])
      const chunks: Buffer[] = []
      for (let i = 0; i < payload.length; i += size) chunks.push(payload.subarray(i, i + size))
      const res = await postRaw(site, { ...alice.headers, ...headers, 'content-length': String(payload.length) }, Readable.from(chunks))
      assert.equal(res.statusCode, 200, `chunks of ${size}: ${res.body}`)
      const served = await site.app.inject({ method: 'GET', url: (res.json() as TempUpload).url, headers: site.gate })
      assert.ok(served.rawPayload.equals(png()))
    }
  })

  test('unrelated text fields are ignored', async () => {
    const res = await post(site, alice.headers, [{ name: 'note', value: 'hello' }, kindField('thumbnail'), file(gif(), 'g.gif')])
    assert.equal(res.statusCode, 200, res.body)
  })

  describe('authentication', () => {
    test('the gate alone is not enough: 401', async () => {
      await expectRejected(site, () => post(site, site.gate, [file(png())]), 401)
    })

    test('no credentials at all: 401', async () => {
      await expectRejected(site, () => post(site, {}, [file(png())]), 401)
    })

    test('a bad token: 401, even with the gate password', async () => {
      await expectRejected(site, () => post(site, { authorization: 'Bearer alice nope' }, [file(png())]), 401)
      await expectRejected(site, () => post(site, { ...site.gate, authorization: `Bearer bob ${alice.token}` }, [file(png())]), 401)
      await expectRejected(site, () => post(site, { authorization: 'Token abc' }, [file(png())]), 401)
    })

    test('a browser session works, with its CSRF token', async () => {
      const login = await site.app.inject({
        method: 'POST', url: '/login/', headers: { ...site.gate, 'content-type': 'application/json' },
        payload: { username: 'alice', password: alice.password },
      })
      assert.equal(login.statusCode, 200, login.body)
      const cookie = login.cookies.map((c) => `${c.name}=${c.value}`).join('; ')
      const csrf = (login.json() as { csrf_token: string }).csrf_token
      await expectRejected(site, () => post(site, { cookie }, [file(png())]), 403, /CSRF/)
      const res = await post(site, { cookie, 'x-csrf-token': csrf }, [file(png())])
      assert.equal(res.statusCode, 200, res.body)
    })
  })

  describe('drafts', () => {
    test('a new draft_uuid creates the draft, owned by the caller, and the upload joins it', async () => {
      const draft = randomUUID()
      const aliceId = (await requireUser(site.app.db, 'alice')).id
      const first = await post(site, alice.headers, [{ name: 'draft_uuid', value: draft }, kindField('thumbnail'), file(png(), 't.png')])
      assert.equal(first.statusCode, 200, first.body)
      assert.ok(await findOwnedDraft(site.app.db, aliceId, draft), 'draft created for alice')
      // draft_uuid after the file, upper case: the same draft.
      const second = await post(site, alice.headers, [file(mp4(), 'm.mp4'), { name: 'draft_uuid', value: draft.toUpperCase() }])
      assert.equal(second.statusCode, 200, second.body)
      const uploads = await listDraftUploads(site.app.db, aliceId, draft)
      assert.deepEqual(uploads.map((u) => u.id).sort(), [(first.json() as TempUpload).uuid, (second.json() as TempUpload).uuid].sort())
    })

    test("someone else's draft: 404, nothing stored, the draft untouched", async () => {
      const draft = randomUUID()
      assert.equal((await post(site, alice.headers, [{ name: 'draft_uuid', value: draft }, file(png())])).statusCode, 200)
      await expectRejected(site, () => post(site, bob.headers, [{ name: 'draft_uuid', value: draft }, file(png())]), 404, /draft/)
      await expectRejected(site, () => post(site, bob.headers, [file(png()), { name: 'draft_uuid', value: draft }]), 404, /draft/)
      const bobId = (await requireUser(site.app.db, 'bob')).id
      assert.equal(await findOwnedDraft(site.app.db, bobId, draft), undefined)
      assert.equal((await listDraftUploads(site.app.db, (await requireUser(site.app.db, 'alice')).id, draft)).length, 1)
    })

    test('a rejected file does not leave an upload in the draft', async () => {
      const draft = randomUUID()
      await expectRejected(site, () => post(site, alice.headers, [{ name: 'draft_uuid', value: draft }, kindField('thumbnail'), file(mp4())]), 400)
      assert.equal((await listDraftUploads(site.app.db, (await requireUser(site.app.db, 'alice')).id, draft)).length, 0)
    })
  })

  test('is in /api/schema/ as multipart with file, kind and draft_uuid, bearerAuth, 200/400/401', async () => {
    const doc = (await site.app.inject({ method: 'GET', url: '/api/schema/', headers: site.gate })).json()
    const op = doc.paths['/api/uploads/'].post
    const form = op.requestBody.content['multipart/form-data'].schema
    assert.deepEqual(Object.keys(form.properties).sort(), ['draft_uuid', 'file', 'kind'])
    assert.deepEqual(form.required, ['file'])
    assert.equal(form.properties.file.format, 'binary')
    assert.deepEqual(form.properties.kind.enum, ['thumbnail', 'version', 'media'])
    assert.deepEqual(op.security, [{ bearerAuth: [] }])
    for (const status of ['200', '400', '401']) assert.ok(op.responses[status], status)
    const del = doc.paths['/api/uploads/{upload_uuid}/delete/'].post
    assert.deepEqual(del.security, [{ bearerAuth: [] }])
    for (const status of ['200', '401', '404']) assert.ok(del.responses[status], status)
  })
})

/**
 * Small upload limits, a public origin and a two-hour upload lifetime: one site for the limits and the urls
 * (neither is about the other's settings; what the limits compare, they compare before and after their requests).
 */
let configured: SiteWith<'alice'>
before(async () => {
  configured = await siteWith({
    env: { PACKS_MAX_THUMBNAIL_SIZE: '1KiB', PACKS_MAX_MEDIA_SIZE: '2KiB', PACKS_MAX_VERSION_SIZE: '4KiB', PACKS_BASE_URL: 'https://packs.example.org/', PACKS_UPLOAD_TTL: '2h' },
    users: ['alice'],
  })
})
after(() => configured?.site.close())

describe('upload size limits', () => {
  let site: TestSite
  let alice: TestUser
  before(() => ({ site, alice } = configured))

  /** A PNG signature followed by padding: detected as PNG, exactly `size` bytes. */
  const pngOfSize = (size: number) => {
    const head = png()
    return Buffer.concat([head, randomBytes(size - head.length)])
  }

  test('exactly at the limit is accepted', async () => {
    const res = await post(site, alice.headers, [kindField('thumbnail'), file(pngOfSize(1024), 'a.png')])
    assert.equal(res.statusCode, 200, res.body)
  })

  test('one byte over, kind before the file: 413 naming the limit, nothing kept', async () => {
    await expectRejected(site, () => post(site, alice.headers, [kindField('thumbnail'), file(pngOfSize(1025), 'a.png')]), 413, /thumbnail limit of 1 KiB/)
  })

  test('over the kind limit with kind after the file: 413, nothing kept', async () => {
    await expectRejected(site, () => post(site, alice.headers, [file(pngOfSize(1500), 'a.png'), kindField('thumbnail')]), 413, /thumbnail limit/)
  })

  test('over every limit with kind after the file: 413 while streaming', async () => {
    await expectRejected(site, () => post(site, alice.headers, [file(pngOfSize(9000), 'a.png'), kindField('version')]), 413, /largest upload limit of 4 KiB/)
  })

  test('the same bytes fit another kind', async () => {
    const res = await post(site, alice.headers, [file(pngOfSize(1500), 'a.png'), kindField('media')])
    assert.equal(res.statusCode, 200, res.body)
  })

  test('media and version limits apply to their kinds', async () => {
    await expectRejected(site, () => post(site, alice.headers, [file(pngOfSize(2049))]), 413, /media limit of 2 KiB/)
    const padded = await zip({ 'pack.mcmeta': '{"pack":{"pack_format":48}}', 'noise.bin': randomBytes(5000) })
    await expectRejected(site, () => post(site, alice.headers, [kindField('version'), file(padded, 'p.zip')]), 413, /version limit of 4 KiB/)
  })
})

describe('upload urls and lifetime', () => {
  test('PACKS_BASE_URL makes url absolute, and pending uploads expire after PACKS_UPLOAD_TTL', async () => {
    const { site, alice } = configured
    const res = await post(site, alice.headers, [file(png(), 'a.png')])
    const body = res.json() as TempUpload
    assert.match(body.url, /^https:\/\/packs\.example\.org\/api\/files\/[0-9a-f-]{36}\/$/)
    const served = await site.app.inject({ method: 'GET', url: new URL(body.url).pathname, headers: site.gate })
    assert.ok(served.rawPayload.equals(png()))
    const row = await site.app.db.selectFrom('uploads').selectAll().where('id', '=', body.uuid).executeTakeFirstOrThrow()
    assert.equal(Date.parse(row.expires_at) - Date.parse(row.created_at), 2 * 3_600_000)
    assert.match(row.expires_at, /Z$/)
  })
})

/**
 * One site for the files whose storage key is not their id, then for deleting uploads: each test of the first
 * leaves the site without a file or an upload (it checks that), as the second's first test needs it.
 */
let emptied: SiteWith<'alice' | 'bob'>
before(async () => { emptied = await siteWith({ users: ['alice', 'bob'] }) })
after(() => emptied?.site.close())

describe('a file whose storage key is not its id (as an imported export may hold)', () => {
  let site: TestSite
  let alice: TestUser
  before(() => ({ site, alice } = emptied))

  /** Moves the file's bytes to a new key and points its row there; returns the key. */
  async function rekey(fileId: string): Promise<string> {
    const key = randomUUID()
    const chunks: Buffer[] = []
    for await (const chunk of await site.app.store.get(fileId)) chunks.push(chunk as Buffer)
    await site.app.store.put(key, Readable.from([Buffer.concat(chunks)]))
    await site.app.store.delete(fileId)
    await site.app.db.updateTable('files').set({ storage_key: key }).where('id', '=', fileId).execute()
    return key
  }

  async function uploadRekeyed(parts: Part[]): Promise<{ upload: TempUpload; key: string }> {
    const res = await post(site, alice.headers, parts)
    assert.equal(res.statusCode, 200, res.body)
    const upload = res.json() as TempUpload
    const key = await rekey(/\/api\/files\/([0-9a-f-]{36})\/$/.exec(upload.url)![1]!)
    const served = await site.app.inject({ method: 'GET', url: upload.url, headers: site.gate })
    assert.equal(served.statusCode, 200)
    assert.ok(served.rawPayload.equals(png()), 'served from its storage key')
    return { upload, key }
  }

  async function expectGone(key: string): Promise<void> {
    await assert.rejects(site.app.store.get(key), (error: NodeJS.ErrnoException) => error.code === 'ENOENT', `bytes under ${key} deleted`)
    assert.deepEqual(await kept(site), { files: [], fileRows: 0, uploadRows: 0 })
  }

  test('deleting the upload deletes the bytes under its storage key', async () => {
    const { upload, key } = await uploadRekeyed([file(png(), 'a.png')])
    const res = await site.app.inject({ method: 'POST', url: `/api/uploads/${upload.uuid}/delete/`, headers: alice.headers })
    assert.equal(res.statusCode, 200, res.body)
    await expectGone(key)
  })

  test('deleting its draft deletes them too', async () => {
    const draft = randomUUID()
    const { key } = await uploadRekeyed([{ name: 'draft_uuid', value: draft }, file(png(), 'a.png')])
    const res = await site.app.inject({ method: 'DELETE', url: `/api/draft/?draft=${draft}`, headers: alice.headers })
    assert.equal(res.statusCode, 200, res.body)
    await expectGone(key)
  })

  test('and so does the sweep, once the upload has expired', async () => {
    const { upload, key } = await uploadRekeyed([file(png(), 'a.png')])
    await site.app.db.updateTable('uploads').set({ expires_at: new Date(0).toISOString() }).where('id', '=', upload.uuid).execute()
    assert.equal((await sweepExpired(site.app.db, site.app.store, site.config.draftTtlMs)).uploads, 1)
    await expectGone(key)
  })
})

describe('POST /api/uploads/{upload_uuid}/delete/', () => {
  let site: TestSite
  let alice: TestUser
  let bob: TestUser
  before(() => ({ site, alice, bob } = emptied))

  const upload = async (user: TestUser, parts: Part[] = [file(png(), 'a.png')]) => {
    const res = await post(site, user.headers, parts)
    assert.equal(res.statusCode, 200, res.body)
    return res.json() as TempUpload
  }
  const remove = (headers: Record<string, string>, id: string) =>
    site.app.inject({ method: 'POST', url: `/api/uploads/${id}/delete/`, headers })

  test('the owner deletes: success, the file is gone from the site and from storage', async () => {
    const mine = await upload(alice)
    assert.equal((await storedFiles(site)).length, 1)
    const res = await remove(alice.headers, mine.uuid)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), { success: true })
    expectError(await site.app.inject({ method: 'GET', url: mine.url, headers: site.gate }), 404)
    assert.deepEqual(await storedFiles(site), [])
    assert.deepEqual(await kept(site), { files: [], fileRows: 0, uploadRows: 0 })
    // Deleting again: it is gone.
    expectError(await remove(alice.headers, mine.uuid), 404)
  })

  test("someone else's upload: 404, exactly like a missing one, and it stays", async () => {
    const mine = await upload(alice)
    const before = await kept(site)
    const res = await remove(bob.headers, mine.uuid)
    expectError(res, 404)
    const missing = await remove(bob.headers, randomUUID())
    expectError(missing, 404)
    assert.equal(res.json().detail, missing.json().detail, 'not yours reads the same as missing')
    assert.deepEqual(await kept(site), before)
    const served = await site.app.inject({ method: 'GET', url: mine.url, headers: site.gate })
    assert.equal(served.statusCode, 200)
    assert.ok(served.rawPayload.equals(png()))
  })

  test('missing and malformed ids: 404', async () => {
    expectError(await remove(alice.headers, randomUUID()), 404)
    expectError(await remove(alice.headers, 'not-a-uuid'), 404)
    expectError(await remove(alice.headers, 'x'.repeat(300)), 404)
  })

  test('needs a user: gate only or a bad token is 401', async () => {
    const mine = await upload(alice)
    expectError(await remove(site.gate, mine.uuid), 401)
    expectError(await remove({ authorization: 'Bearer alice wrong' }, mine.uuid), 401)
    assert.equal((await site.app.inject({ method: 'GET', url: mine.url, headers: site.gate })).statusCode, 200)
  })

  test('deleting one upload of a draft leaves the draft and its other uploads', async () => {
    const draft = randomUUID()
    const aliceId = (await requireUser(site.app.db, 'alice')).id
    const one = await upload(alice, [{ name: 'draft_uuid', value: draft }, file(png(), 'one.png')])
    const two = await upload(alice, [{ name: 'draft_uuid', value: draft }, file(gif(), 'two.gif')])
    assert.equal((await remove(alice.headers, one.uuid)).statusCode, 200)
    assert.ok(await findOwnedDraft(site.app.db, aliceId, draft))
    assert.deepEqual((await listDraftUploads(site.app.db, aliceId, draft)).map((u) => u.id), [two.uuid])
    assert.equal((await site.app.inject({ method: 'GET', url: two.url, headers: site.gate })).statusCode, 200)
  })

  test('answers without the trailing slash too', async () => {
    const mine = await upload(alice)
    assert.equal((await site.app.inject({ method: 'POST', url: `/api/uploads/${mine.uuid}/delete`, headers: alice.headers })).statusCode, 200)
  })
})

describe('a store that fails while a version archive is read', () => {
  let site: TestSite
  let alice: TestUser
  const logged: { level: number; msg: string; err?: { message?: string; stack?: string } }[] = []
  let failRangedReads = false

  before(async () => {
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split('\n').filter(Boolean)) logged.push(JSON.parse(line) as (typeof logged)[number])
        callback()
      },
    })
    site = await makeSite({}, { logger: { level: 'error', stream } })
    alice = await site.user('alice')
    // The archive is read back from storage in ranges (src/uploads/archives.ts): those reads fail as an unreachable store's do.
    const store = site.app.store
    const get = store.get.bind(store)
    store.get = async (key, range) => {
      if (failRangedReads && range) throw new StorageUnavailable(new Error('connection refused by the test'))
      return get(key, range)
    }
  })
  after(() => site.close())

  /** The 503 of an unavailable store, logged once with its cause; never a 400 calling the archive unreadable. */
  async function expectUnavailable(send: () => Promise<Awaited<ReturnType<typeof post>>>): Promise<void> {
    logged.length = 0
    failRangedReads = true
    try {
      const res = await expectRejected(site, send, 503, /^storage is unavailable, try again$/)
      assert.equal(res.headers['retry-after'], '5')
    } finally {
      failRangedReads = false
    }
    const errors = logged.filter((entry) => entry.level >= 50)
    assert.equal(errors.length, 1, JSON.stringify(logged))
    assert.match(JSON.stringify(errors[0]), /connection refused by the test/)
  }

  test('POST /api/uploads/, kind before or after the file: 503, logged, nothing kept', async () => {
    await expectUnavailable(async () => post(site, alice.headers, [kindField('version'), file(await datapack(48), 'p.zip')]))
    await expectUnavailable(async () => post(site, alice.headers, [file(await datapack(48), 'p.zip'), kindField('version')]))
    // The store back: the same archive is a readable ZIP.
    const res = await post(site, alice.headers, [kindField('version'), file(await datapack(48), 'p.zip')])
    assert.equal(res.statusCode, 200, res.body)
  })

  test('a new version of a pack: 503, logged, nothing kept', async () => {
    const pack = await publishPack(site, alice)
    const versions = `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`
    const send = async () => {
      const form = multipart([{ name: 'version_name', value: '2.0.0' }, file(await datapack(57), 'v2.zip')])
      return site.app.inject({ method: 'POST', url: versions, headers: { ...alice.headers, ...form.headers }, payload: form.payload })
    }
    await expectUnavailable(send)
    assert.equal((await send()).statusCode, 201)
  })
})
