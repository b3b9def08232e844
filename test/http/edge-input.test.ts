// Hostile input at the edge: where a form sends the
// browser afterwards (`next`), JSON nested deeper than anything walks safely,
// page numbers far out of range, multipart boundaries longer than RFC 2046
// allows, and NUL or unpaired surrogates in any text. Each once gave a 500 (or
// an open redirect); each must be a clear 4xx, on SQLite + disk and on
// PostgreSQL + S3, which refuses a NUL in text where SQLite stores it.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { MAX_JSON_DEPTH } from '../../src/http/json-body.js'
import { MAX_PAGE } from '../../src/api/packs.js'
import { expectError, MASTER_PASSWORD, siteWith, storedFiles, type SiteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart, png } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const SITE = 'http://packs.example'

/** Where a browser that posted the form at `from` goes: it must be this site. */
function assertStaysHere(res: LightMyRequestResponse, from: string, label: string): string {
  assert.equal(res.statusCode, 303, `${label}: a redirect, got ${res.statusCode}: ${res.body}`)
  const location = String(res.headers.location)
  assert.doesNotMatch(location, /[\u0000-\u001f\u007f\\]/, `${label}: no control character or backslash in ${JSON.stringify(location)}`)
  assert.ok(location.startsWith('/') && !location.startsWith('//'), `${label}: a path of this site, not ${JSON.stringify(location)}`)
  assert.equal(new URL(location, `${SITE}${from}`).origin, SITE, `${label}: ${JSON.stringify(location)} stays on the site`)
  return location
}

/** `next` values that once left the site, or that try to. */
const HOSTILE_NEXT: string[] = [
  '/\t/evil.example', '/%09/evil.example', '/\n/evil.example', '/%0a/x', '/\r\n/evil.example', '\t//evil.example', ' //evil.example',
  '/\\evil.example', '/\\\\evil.example', '\\\\evil.example', '/\\/evil.example', '/%5C/evil.example', '/%5c%5cevil.example',
  'https://evil.example', '//evil.example', '///evil.example', 'http:evil.example', 'javascript:alert(1)', 'data:text/html,x',
  '/%2F/evil.example', '/%2f%2fevil.example', '/.//evil.example', '/%2e//evil.example', '/%2E%2E//evil.example', '/a/..//evil.example',
  '/..//evil.example', '/\u3000/evil.example', '/\uff0f\uff0fevil.example', '/\u2215\u2215evil.example', '/@evil.example',
  '/\u0000/evil.example', '/x\u007f', `/${'a'.repeat(100_000)}`, `/${'/'.repeat(5000)}evil.example`, '', 'evil.example',
]

// One site for the whole file, a user of its own for each part. Nothing here is refused as a wrong password
// (no failure limit comes near), and the one count asserted, the packs listed in 'page numbers out of range',
// is taken before the parts after it publish packs of their own.
let shared: SiteWith<'nextuser' | 'deep' | 'pager' | 'numbers' | 'bounds' | 'nul'>
before(async () => { shared = await siteWith({ users: ['nextuser', 'deep', 'pager', 'numbers', 'bounds', 'nul'] }) })
after(() => shared?.site.close())

describe('next after the gate, sign-in and sign-up stays on the site', () => {
  let site: TestSite
  let user: TestUser
  before(() => ({ site, nextuser: user } = shared))

  const post = (url: string, fields: Record<string, string>) =>
    site.app.inject({ method: 'POST', url, headers: { ...site.gate, ...FORM }, payload: new URLSearchParams(fields).toString() })

  test('an ordinary path and query come through unchanged', async () => {
    const res = await post('/gate/', { password: MASTER_PASSWORD, next: '/packs/a/b/?tab=versions&x=1' })
    assert.equal(assertStaysHere(res, '/gate/', 'gate'), '/packs/a/b/?tab=versions&x=1')
    const login = await post('/login/', { username: user.username, password: user.password, next: '/drafts/' })
    assert.equal(assertStaysHere(login, '/login/', 'login'), '/drafts/')
  })

  /** A redirect that stays here; a NUL never gets that far: text input refuses it first (400). */
  function expectSafe(res: LightMyRequestResponse, from: string, next: string): void {
    if (next.includes('\u0000')) expectError(res, 400, /"next" contains a NUL/)
    else assertStaysHere(res, from, JSON.stringify(next.slice(0, 40)))
  }

  test('POST /gate/', async () => {
    for (const next of HOSTILE_NEXT) expectSafe(await post('/gate/', { password: MASTER_PASSWORD, next }), '/gate/', next)
  })

  test('POST /login/', async () => {
    for (const next of HOSTILE_NEXT) expectSafe(await post('/login/', { username: user.username, password: user.password, next }), '/login/', next)
  })

  test('POST /signup/', async () => {
    let i = 0
    for (const next of HOSTILE_NEXT) {
      const res = await post('/signup/', { username: `signup${i++}`, password: 'long-enough-1', password_repeat: 'long-enough-1', next })
      expectSafe(res, '/signup/', next)
    }
  })

  test('the gate, sign-in and sign-up pages carry only a safe next in their forms and links', async () => {
    for (const page of ['/gate/', '/login/', '/signup/']) {
      for (const next of HOSTILE_NEXT.filter((n) => n.length < 10_000 && !n.includes('\u0000'))) {
        const res = await site.app.inject({ url: `${page}?next=${encodeURIComponent(next)}`, headers: { ...site.gate, accept: 'text/html' } })
        assert.equal(res.statusCode, 200, `${page} ${JSON.stringify(next)}: ${res.statusCode}`)
        const hidden = /<input type="hidden" name="next" value="([^"]*)">/.exec(res.body)
        assert.ok(hidden, `${page} has the hidden next field`)
        const value = hidden[1]!.replaceAll('&amp;', '&').replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>')
        assert.ok(value.startsWith('/') && !value.startsWith('//') && !/[\u0000-\u001f\\]/.test(value), `${page}: ${JSON.stringify(value)}`)
        assert.equal(new URL(value, SITE).origin, SITE)
      }
    }
  })

  test('next=/%0a/x is a redirect to a safe path, not a 500 (the header would not even be sent)', async () => {
    for (const url of ['/gate/', '/login/']) {
      const fields: Record<string, string> = url === '/gate/' ? { password: MASTER_PASSWORD } : { username: user.username, password: user.password }
      const res = await site.app.inject({ method: 'POST', url, headers: { ...site.gate, ...FORM }, payload: `${new URLSearchParams(fields)}&next=/%0a/x` })
      assert.equal(assertStaysHere(res, url, url), '/')
    }
    const page = await site.app.inject({ url: '/gate/?next=/%0a/x', headers: { accept: 'text/html' } })
    assert.equal(page.statusCode, 200)
  })
})

describe('JSON nesting depth', () => {
  let site: TestSite
  let user: TestUser
  before(() => ({ site, deep: user } = shared))

  const postRaw = (payload: string, headers: Record<string, string> = {}) =>
    site.app.inject({ method: 'POST', url: '/api/draft/', headers: { ...user.headers, 'content-type': 'application/json', ...headers }, payload })

  /** A draft body whose data.x nests `levels` more arrays or objects (the body and data are two levels already). */
  const nested = (levels: number, kind: 'array' | 'object') => {
    const open = kind === 'array' ? '['.repeat(levels) : '{"a":'.repeat(levels)
    const close = kind === 'array' ? ']'.repeat(levels) : '}'.repeat(levels)
    return `{"draft":"${randomUUID()}","data":{"x":${kind === 'array' ? open + close : `${open}1${close}`}}}`
  }

  test('5,000 levels of arrays or of objects are a 400 naming the limit, not a stack overflow', async () => {
    for (const kind of ['array', 'object'] as const) {
      expectError(await postRaw(nested(5000, kind)), 400, new RegExp(`^JSON nested deeper than ${MAX_JSON_DEPTH} levels$`))
    }
  })

  test(`exactly ${MAX_JSON_DEPTH} levels are saved and read back; one more is refused`, async () => {
    for (const kind of ['array', 'object'] as const) {
      const body = nested(MAX_JSON_DEPTH - 2, kind)
      const saved = await postRaw(body)
      assert.equal(saved.statusCode, 200, saved.body)
      const draft = (JSON.parse(body) as { draft: string }).draft
      const loaded = await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: user.headers })
      assert.equal(loaded.statusCode, 200)
      assert.deepEqual(loaded.json().data, JSON.parse(body).data)
      expectError(await postRaw(nested(MAX_JSON_DEPTH - 1, kind)), 400, /nested deeper/)
    }
  })

  test('brackets inside strings do not count, escaped quotes included', async () => {
    const draft = randomUUID()
    const data = {
      title: '['.repeat(5000),
      summary: `\\"${'{'.repeat(3000)}"\\`,
      description: `"${'[{'.repeat(2000)}\\`,
      tags: ['\\', '"', '\\"[', ']'],
    }
    const res = await postRaw(JSON.stringify({ draft, data }))
    assert.equal(res.statusCode, 200, res.body)
    const loaded = await site.app.inject({ url: `/api/draft/?draft=${draft}`, headers: user.headers })
    assert.deepEqual(loaded.json().data, data)
  })

  test("Fastify's JSON rules still hold: empty, invalid, prototype poisoning, too large", async () => {
    expectError(await postRaw(''), 400, /empty/)
    expectError(await postRaw('{"draft": '), 400, /not valid JSON/)
    expectError(await postRaw('[[[[[[['), 400, /not valid JSON/)
    expectError(await postRaw(`{"draft":"${randomUUID()}","data":{"__proto__":{"admin":true}}}`), 400)
    expectError(await postRaw(`{"draft":"${randomUUID()}","data":{"constructor":{"prototype":{"admin":true}}}}`), 400)
    expectError(await postRaw(JSON.stringify({ draft: randomUUID(), data: { title: 'x'.repeat(300 * 1024) } })), 413)
    // The parser is the app's, for every JSON route, and keeps charset parameters working.
    const ok = await postRaw(JSON.stringify({ draft: randomUUID(), data: { title: 'ok' } }), { 'content-type': 'application/json; charset=utf-8' })
    assert.equal(ok.statusCode, 200)
    const tokens = await site.app.inject({ method: 'POST', url: '/api/tokens/', headers: { ...user.headers, 'content-type': 'application/json' }, payload: `{"name":${'['.repeat(100)}` })
    assert.equal(tokens.statusCode, 400)
  })
})

describe('page numbers out of range', () => {
  let site: TestSite
  before(async () => {
    site = shared.site
    // The site's only pack so far.
    await publishPack(site, shared.pager)
  })

  // "Infinity" passed the validator (its coercion makes a number its range checks skip); "0x10" and " 5" were read as numbers.
  const BAD = ['1e300', '-1', '0', '1.5', '99999999999999999999', 'NaN', '', 'Infinity', '-Infinity', String(MAX_PAGE + 1), '0x10', '1,2', ' ', ' 5', '1e2']

  test('the API answers 400 with a detail for every bad page and per_page', async () => {
    for (const value of BAD) {
      expectError(await site.app.inject({ url: `/api/packs/?page=${encodeURIComponent(value)}`, headers: site.gate }), 400)
      expectError(await site.app.inject({ url: `/api/packs/?per_page=${encodeURIComponent(value)}`, headers: site.gate }), 400)
    }
    expectError(await site.app.inject({ url: '/api/packs/?per_page=101', headers: site.gate }), 400)
    expectError(await site.app.inject({ url: '/api/packs/?page=1&page=2', headers: site.gate }), 400)
  })

  test('the largest page and per_page are answered (empty), on both databases', async () => {
    const res = await site.app.inject({ url: `/api/packs/?page=${MAX_PAGE}&per_page=100`, headers: site.gate })
    assert.equal(res.statusCode, 200, res.body)
    const list = res.json() as { items: unknown[]; page: number; per_page: number; total: number }
    assert.deepEqual({ ...list, items: list.items.length }, { items: 0, page: MAX_PAGE, per_page: 100, total: 1, total_capped: false })
  })

  test('the browse page answers 400 or 404, never 500', async () => {
    for (const value of [...BAD, '999999999', '1000000000']) {
      const res = await site.app.inject({ url: `/?page=${encodeURIComponent(value)}`, headers: { ...site.gate, accept: 'text/html' } })
      assert.ok(res.statusCode === 400 || res.statusCode === 404 || (value === '' || value === ' ') && res.statusCode === 200,
        `page=${JSON.stringify(value)}: ${res.statusCode}`)
    }
  })
})

test('a number sent as text in a JSON body is held to decimal digits too', async () => {
  const { site, numbers: user } = shared
  // Tokens are made from a browser session, with its CSRF token.
  const login = await site.app.inject({ method: 'POST', url: '/login/', headers: site.gate, payload: { username: user.username, password: user.password } })
  const session = login.cookies.find((c) => c.name === 'packs_session')!.value
  const headers = { ...site.gate, cookie: `packs_session=${session}`, 'x-csrf-token': (login.json() as { csrf_token: string }).csrf_token }
  for (const days of ['Infinity', '0x10', ' 5', '1e1']) {
    const res = await site.app.inject({ method: 'POST', url: '/api/tokens/', headers, payload: { name: 'x', expires_in_days: days } })
    expectError(res, 400, /"expires_in_days" must be a whole number in decimal digits/)
  }
  const ok = await site.app.inject({ method: 'POST', url: '/api/tokens/', headers, payload: { name: 'x', expires_in_days: '5' } })
  assert.equal(ok.statusCode, 201, ok.body)
})

describe('multipart boundaries', () => {
  let site: TestSite
  let user: TestUser
  let pack: PackJson
  before(async () => {
    ;({ site, bounds: user } = shared)
    pack = await publishPack(site, user)
  })

  const uploadWith = (contentType: string, payload: Buffer) =>
    site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...user.headers, 'content-type': contentType }, payload })
  const versionWith = (contentType: string, payload: Buffer) =>
    site.app.inject({ method: 'POST', url: `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, headers: { ...user.headers, 'content-type': contentType }, payload })

  test('a boundary over 70 characters is a 400 before the parser runs, on both form routes; nothing is stored', async () => {
    const before = await storedFiles(site)
    const zip = await datapack(48)
    for (const length of [71, 257, 300, 4000]) {
      const boundary = 'b'.repeat(length)
      const upload = multipart([{ name: 'kind', value: 'thumbnail' }, { name: 'file', value: png(), filename: 'a.png' }], boundary)
      expectError(await uploadWith(upload.headers['content-type']!, upload.payload), 400, /longer than 70/)
      const version = multipart([{ name: 'version_name', value: `v${length}` }, { name: 'file', value: zip, filename: 'v.zip' }], boundary)
      expectError(await versionWith(version.headers['content-type']!, version.payload), 400, /longer than 70/)
    }
    assert.deepEqual(await storedFiles(site), before)
  })

  test('characters outside RFC 2046 bchars, a trailing space, two boundaries or broken parameters are 400', async () => {
    const body = (boundary: string) => multipart([{ name: 'file', value: png(), filename: 'a.png' }], boundary).payload
    for (const [contentType, boundary] of [
      ['multipart/form-data; boundary=abc*def', 'abc*def'],
      ['multipart/form-data; boundary="abc def "', 'abc def '],
      ['multipart/form-data; boundary="a\\"b"', 'a"b'],
      ['multipart/form-data; boundary=abc; boundary=abc', 'abc'],
      ["multipart/form-data; boundary*=utf-8''abc", 'abc'],
      ['multipart/form-data; boundary =abc', 'abc'],
      ['multipart/form-data; boundary="abc', 'abc'],
      ['multipart/form-data; boundary=', 'abc'],
      ['multipart/form-data; charset', 'abc'],
    ] as const) {
      expectError(await uploadWith(contentType, body(boundary)), 400)
      expectError(await versionWith(contentType, body(boundary)), 400)
    }
  })

  test('the longest boundary RFC 2046 allows, quoted with its extra characters, works', async () => {
    const boundary = `'()+_,-./:=? ${'z'.repeat(57)}`
    assert.equal(boundary.length, 70)
    const upload = multipart([{ name: 'kind', value: 'thumbnail' }, { name: 'file', value: png(), filename: 'a.png' }], boundary)
    const res = await uploadWith(`multipart/form-data; boundary="${boundary}"`, upload.payload)
    assert.equal(res.statusCode, 200, res.body)
    const version = multipart([{ name: 'version_name', value: '2.0.0' }, { name: 'file', value: await datapack(48), filename: 'v.zip' }], boundary)
    const added = await versionWith(`multipart/form-data; boundary="${boundary}"`, version.payload)
    assert.equal(added.statusCode, 201, added.body)
  })
  // Found by the fuzzer: @fastify/busboy skips such parts and stalls on one longer than its 16 KiB buffer,
  // so the request waited for its timeout; a part without a name reached the text check undefined (a 500).
  test('parts the parser would skip, or without a name, are a 400 at once, small or large, before or after the file; nothing is stored', async () => {
    const before = await storedFiles(site)
    const part = (headers: string, body: string) => `--b\r\n${headers}\r\n\r\n${body}\r\n`
    const file = (name = 'file') => Buffer.concat([
      Buffer.from(`--b\r\nContent-Disposition: form-data; name="${name}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`), png(), Buffer.from('\r\n'),
    ])
    const kind = part('Content-Disposition: form-data; name="kind"', 'thumbnail')
    for (const size of [10, 17_000, 200_000]) {
      for (const [headers, detail] of [
        ['Content-Type: text/plain', /no Content-Disposition/],
        ['Content-Disposition: attachment; name="x"', /not form-data/],
        ['Content-Disposition: form-data; name="a\nb"', /bare line break/],
        ['Content-Disposition: form-data; name="a"\r\n folded: yes', /folded/],
        ['Content-Disposition: form-data', /has no name/],
      ] as const) {
        const bad = part(headers, 'x'.repeat(size))
        for (const payload of [
          Buffer.concat([Buffer.from(kind + bad), file(), Buffer.from('--b--\r\n')]),
          Buffer.concat([Buffer.from(kind), file(), Buffer.from(bad + '--b--\r\n')]),
        ]) {
          const started = performance.now()
          const res = await uploadWith('multipart/form-data; boundary=b', payload)
          expectError(res, 400, detail)
          assert.ok(performance.now() - started < 5000, 'answered at once, not at a timeout')
        }
      }
    }
    const headerFlood = Buffer.from(`--b\r\nContent-Disposition: form-data; name="kind"\r\nX: ${'y'.repeat(10_000)}\r\n\r\nthumbnail\r\n--b--\r\n`)
    expectError(await uploadWith('multipart/form-data; boundary=b', headerFlood), 400, /headers are longer/)
    assert.deepEqual(await storedFiles(site), before)
  })
})

describe('NUL and unpaired surrogates in text input', () => {
  let site: TestSite
  let user: TestUser
  let pack: PackJson
  before(async () => {
    ;({ site, nul: user } = shared)
    pack = await publishPack(site, user)
  })

  test('query parameters: 400 naming the parameter, on every text query', async () => {
    for (const url of [
      '/api/tags/autocomplete/?q=%00', '/api/users/autocomplete/?q=a%00b', '/api/packs/?q=%00', '/api/packs/?tag=x%00',
      '/api/packs/?category=%00', `/api/packs/${pack.namespace}/${pack.pack_id}/latest?x=%00`,
    ]) {
      const detail = expectError(await site.app.inject({ url, headers: site.gate }), 400)
      assert.match(detail, /query parameter "\w+" (contains a NUL character|is not well-formed Unicode)/, url)
    }
    expectError(await site.app.inject({ url: '/api/tags/autocomplete/?%00=1', headers: site.gate }), 400, /query parameter name/)
    // A percent-escape that is not UTF-8 (a lone surrogate's bytes) stays as its literal text: nothing to refuse.
    const escaped = await site.app.inject({ url: '/api/tags/autocomplete/?q=%ED%A0%80', headers: site.gate })
    assert.equal(escaped.statusCode, 200)
    expectError(await site.app.inject({ url: `/api/draft/?draft=${randomUUID()}%00`, headers: user.headers }), 400, /"draft"/)
  })

  test('path parameters: 404, like any path parameter that names nothing', async () => {
    for (const url of ['/api/packs/%00/%00/latest', `/api/packs/${pack.namespace}%00/${pack.pack_id}/latest`, '/api/packs/%00/x/', '/api/files/%00/']) {
      expectError(await site.app.inject({ url, headers: site.gate }), 404, /path parameter/)
    }
    const head = await site.app.inject({ method: 'HEAD', url: '/api/packs/%00/%00/latest', headers: site.gate })
    assert.equal(head.statusCode, 404)
    // Undecodable (a lone surrogate's bytes) was already a 404 from the router.
    expectError(await site.app.inject({ url: '/api/packs/%ED%A0%80/x/latest', headers: site.gate }), 404)
    expectError(await site.app.inject({ method: 'POST', url: '/api/uploads/%00/delete/', headers: user.headers }), 404)
    // The hot path is untouched.
    assert.equal((await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/latest`, headers: site.gate })).statusCode, 200)
  })

  test('JSON bodies: 400 naming the field, for values and member names at any depth', async () => {
    const save = (data: unknown) => site.app.inject({ method: 'POST', url: '/api/draft/', headers: user.headers, payload: { draft: randomUUID(), data } })
    expectError(await save({ title: 'a\u0000b' }), 400, /body field "data\.title" contains a NUL character/)
    expectError(await save({ tags: ['ok', '\ud800'] }), 400, /body field "data\.tags\[1\]" is not well-formed Unicode/)
    expectError(await save({ deep: { deeper: [{ x: 'fine' }, { y: '\udc00 lone low' }] } }), 400, /"data\.deep\.deeper\[1\]\.y"/)
    expectError(await save({ 'a\u0000': 1 }), 400, /member name in the body field "data" contains a NUL/)
    expectError(await save({ ok: { '\ud83d': 1 } }), 400, /member name in the body field "data\.ok"/)
    // As raw JSON escapes, the way a hostile client sends them.
    const raw = await site.app.inject({
      method: 'POST', url: '/api/draft/', headers: { ...user.headers, 'content-type': 'application/json' },
      payload: `{"draft":"${randomUUID()}","data":{"title":"x\\u0000","summary":"\\ud800"}}`,
    })
    expectError(raw, 400, /"data\.title" contains a NUL/)
    // A well-formed pair is fine.
    const emoji = await save({ title: 'pack \ud83d\ude00' })
    assert.equal(emoji.statusCode, 200, emoji.body)
  })

  test('forms: sign-in with a NUL username, the gate with a NUL password: 400', async () => {
    const login = await site.app.inject({ method: 'POST', url: '/login/', headers: { ...site.gate, ...FORM }, payload: 'username=nul%00&password=x' })
    expectError(login, 400, /"username" contains a NUL/)
    const gate = await site.app.inject({ method: 'POST', url: '/gate/', headers: FORM, payload: 'password=%00' })
    expectError(gate, 400, /"password"/)
    const page = await site.app.inject({ method: 'POST', url: '/login/', headers: { ...site.gate, ...FORM, accept: 'text/html' }, payload: 'username=nul%00&password=x' })
    assert.equal(page.statusCode, 400)
    assert.match(String(page.headers['content-type']), /^text\/html/)
  })

  test('multipart text fields: 400 naming the field, nothing stored', async () => {
    const before = await storedFiles(site)
    const upload = (parts: Parameters<typeof multipart>[0]) => {
      const body = multipart(parts)
      return site.app.inject({ method: 'POST', url: '/api/uploads/', headers: { ...user.headers, ...body.headers }, payload: body.payload })
    }
    expectError(await upload([{ name: 'kind', value: 'thumbnail\u0000' }, { name: 'file', value: png(), filename: 'a.png' }]), 400, /"kind" field contains a NUL/)
    expectError(await upload([{ name: 'file', value: png(), filename: 'a.png' }, { name: 'draft_uuid', value: `${randomUUID()}\u0000` }]), 400, /"draft_uuid" field/)
    expectError(await upload([{ name: 'ki\u0000nd', value: 'media' }, { name: 'file', value: png(), filename: 'a.png' }]), 400, /field name contains a NUL/)
    const version = multipart([{ name: 'file', value: await datapack(48), filename: 'v.zip' }, { name: 'version_name', value: '2.0\u0000' }])
    const res = await site.app.inject({
      method: 'POST', url: `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, headers: { ...user.headers, ...version.headers }, payload: version.payload,
    })
    expectError(res, 400, /"version_name" field contains a NUL/)
    assert.deepEqual(await storedFiles(site), before)
  })

  test('a session cookie holding a NUL is a bad credential (401), not a database error', async () => {
    const res = await site.app.inject({ url: '/api/drafts/', headers: { ...site.gate, cookie: 'packs_session=%00abc' } })
    assert.ok(res.statusCode === 401 || res.statusCode === 400, `${res.statusCode}: ${res.body}`)
  })
})
