// The update-check's fast path (src/update-check/fast-path.ts)
// answers cached update-checks before Fastify sees them. It is only reached
// through a listening server (app.inject() goes straight to Fastify), so these
// tests send each request twice: through the socket, and through app.inject()
// (Fastify's route). Whatever the fast path takes, it must answer with the
// route's status, body and headers; whatever it should not take (a wrong or
// missing password, a blocked client, a variant, HEAD, an escape, a miss, a
// hidden pack) must still get Fastify's answer.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { siteWith, MASTER_PASSWORD, type TestSite, type TestUser } from '../helpers/app.js'
import { publishPack } from '../helpers/packs.js'

let site: TestSite
let alice: TestUser
let warden: TestUser
let port: number

interface Answer { status: number; headers: Record<string, string>; body: string }

/** A raw request on its own connection, with exactly these headers (fetch would add its own). */
function raw(method: string, path: string, headers: Record<string, string | string[]>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers }, agent: false }, (response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk: string) => { body += chunk }).on('end', () => {
        resolve({ status: response.statusCode!, headers: response.headers as Record<string, string>, body })
      })
    })
    request.once('error', reject).end()
  })
}

/** What Fastify's route answers to the same request. */
async function viaFastify(method: 'GET' | 'HEAD', path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await site.app.inject({ method, url: path, headers: { host: `127.0.0.1:${port}`, ...headers }, remoteAddress: '127.0.0.1' })
  return { status: res.statusCode, headers: res.headers as Record<string, string>, body: res.body }
}

/** The headers a client can rely on (Date, Connection and Keep-Alive are Node's, and the same either way). */
function comparable(answer: Answer) {
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, ...headers } = answer.headers
  return { status: answer.status, headers, body: answer.body }
}

const fastRequests = () => site.app.metrics.summary().find((r) => r.route === 'GET /api/packs/:namespace/:pack_id/latest')?.count ?? 0

before(async () => {
  ;({ site, alice, warden } = await siteWith({ users: ['alice'], staff: ['warden'] }))
  await publishPack(site, alice, { title: 'Lamps', version_name: '1.0' })
  await publishPack(site, alice, { title: 'Hidden', version_name: '1.0' })
  const hide = await site.app.inject({ method: 'POST', url: '/api/packs/alice/hidden/hide/', headers: warden.headers, payload: {} })
  assert.equal(hide.statusCode, 200, hide.body)
  await site.app.listen({ port: 0, host: '127.0.0.1' })
  port = (site.app.server.address() as { port: number }).port
})
after(() => site.close())

const gate = { 'x-master-password': MASTER_PASSWORD }

describe('the fast path answers as the route does', () => {
  test('200 and 304: the same status, headers and bytes', async () => {
    // The first check fills the cache (through Fastify); later ones may take the fast path.
    const first = await raw('GET', '/api/packs/alice/lamps/latest', gate)
    assert.equal(first.status, 200, first.body)
    const before = fastRequests()
    const servedBefore = site.app.fastPathServed()
    const fast = await raw('GET', '/api/packs/alice/lamps/latest', gate)
    // With Redis the fast path waits for invalidations it can trust (src/shared-state/); in memory it answers.
    if (site.config.redisUrl === null) assert.equal(site.app.fastPathServed(), servedBefore + 1, 'the fast path answered')
    assert.deepEqual(comparable(fast), comparable(await viaFastify('GET', '/api/packs/alice/lamps/latest', gate)))
    assert.equal(fastRequests(), before + 2, 'the statistics count it (and the inject beside it)')
    const conditional = { ...gate, 'if-none-match': fast.headers.etag! }
    const notModified = await raw('GET', '/api/packs/alice/lamps/latest', conditional)
    assert.equal(notModified.status, 304)
    assert.equal(notModified.headers['content-length'], undefined, 'a 304 says no length')
    assert.deepEqual(comparable(notModified), comparable(await viaFastify('GET', '/api/packs/alice/lamps/latest', conditional)))
    // Any case in the names, as the route matches them; the signature covers the path as it was asked (RFC 9421
    // "@path"), so that spelling has its own.
    const otherCase = await raw('GET', '/api/packs/ALICE/Lamps/latest', gate)
    const withoutSignature = (answer: Answer) => {
      const { signature, 'signature-input': input, ...headers } = comparable(answer).headers
      assert.ok(signature && input, 'signed')
      return { ...comparable(answer), headers }
    }
    assert.deepEqual(withoutSignature(otherCase), withoutSignature(fast))
    assert.notEqual(otherCase.headers.signature, fast.headers.signature)
  })

  test('what it must not take still gets the route\'s answer', async () => {
    await raw('GET', '/api/packs/alice/lamps/latest', gate)
    const cases: Array<[string, 'GET' | 'HEAD', string, Record<string, string>]> = [
      ['a wrong password', 'GET', '/api/packs/alice/lamps/latest', { 'x-master-password': 'wrong' }],
      ['no password', 'GET', '/api/packs/alice/lamps/latest', {}],
      ['a variant', 'GET', '/api/packs/alice/lamps/latest?pack_format=48', gate],
      ['HEAD', 'HEAD', '/api/packs/alice/lamps/latest', gate],
      ['a percent-escape', 'GET', '/api/packs/alic%65/lamps/latest', gate],
      ['a trailing slash', 'GET', '/api/packs/alice/lamps/latest/', gate],
      ['an unknown pack', 'GET', '/api/packs/alice/nothing/latest', gate],
      ['a hidden pack', 'GET', '/api/packs/alice/hidden/latest', gate],
      ['a token', 'GET', '/api/packs/alice/lamps/latest', alice.headers],
    ]
    for (const [what, method, path, headers] of cases) {
      const served = site.app.fastPathServed()
      const socket = await raw(method, path, headers)
      assert.equal(site.app.fastPathServed(), served, `${what}: not taken`)
      const route = await viaFastify(method, path, headers)
      assert.equal(socket.status, route.status, what)
      if (method === 'GET') assert.equal(socket.body, route.body, what)
    }
  })

  test('header fields are read from the raw list: any case is taken; a copy, a cookie or a body is left to Fastify', async () => {
    const first = await raw('GET', '/api/packs/alice/lamps/latest', gate)
    const titleCase = { 'X-Master-Password': MASTER_PASSWORD, 'If-None-Match': first.headers.etag! }
    let served = site.app.fastPathServed()
    const fast = await raw('GET', '/api/packs/alice/lamps/latest', titleCase)
    // With Redis the fast path may wait for invalidations it can trust, as above.
    if (site.config.redisUrl === null) assert.equal(site.app.fastPathServed(), served + 1, 'Title-Case field names: taken')
    assert.equal(fast.status, 304)
    assert.deepEqual(comparable(fast), comparable(await viaFastify('GET', '/api/packs/alice/lamps/latest', titleCase)))
    // Node joins a repeated field with ", " for Fastify, which is what the route then sees.
    const cases: Array<[string, Record<string, string | string[]>, Record<string, string>]> = [
      ['the password twice', { 'x-master-password': [MASTER_PASSWORD, MASTER_PASSWORD] }, { 'x-master-password': `${MASTER_PASSWORD}, ${MASTER_PASSWORD}` }],
      ['If-None-Match twice', { ...gate, 'if-none-match': [first.headers.etag!, '"other"'] }, { ...gate, 'if-none-match': `${first.headers.etag!}, "other"` }],
      ['a cookie', { ...gate, Cookie: 'theme=dark' }, { ...gate, cookie: 'theme=dark' }],
      ['a body length', { ...gate, 'Content-Length': '0' }, { ...gate, 'content-length': '0' }],
    ]
    for (const [what, sent, joined] of cases) {
      served = site.app.fastPathServed()
      const socket = await raw('GET', '/api/packs/alice/lamps/latest', sent)
      assert.equal(site.app.fastPathServed(), served, `${what}: not taken`)
      const route = await viaFastify('GET', '/api/packs/alice/lamps/latest', joined)
      assert.equal(socket.status, route.status, what)
      assert.equal(socket.body, route.body, what)
    }
  })

  test('a client blocked for wrong passwords gets 429 even with the right one', async () => {
    let status = 0
    for (let i = 0; i < 20 && status !== 429; i++) status = (await raw('GET', '/api/packs/alice/lamps/latest', { 'x-master-password': `wrong-${i}` })).status
    assert.equal(status, 429)
    const served = site.app.fastPathServed()
    const right = await raw('GET', '/api/packs/alice/lamps/latest', gate)
    assert.equal(right.status, 429, right.body)
    assert.equal(site.app.fastPathServed(), served)
  })
})
