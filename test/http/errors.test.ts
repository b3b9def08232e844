// Cross-cutting response rules: JSON { detail } errors, 405, trailing slashes.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { expectError, makeSite, type TestSite, type TestUser } from '../helpers/app.js'

let site: TestSite
let user: TestUser
before(async () => {
  site = await makeSite()
  user = await site.user('erin')
})
after(() => site.close())

test('an unknown API path is a JSON 404 (behind the gate)', async () => {
  expectError(await site.app.inject({ url: '/api/does-not-exist/', headers: site.gate }), 404)
})

test('a known path with the wrong method is 405 with Allow', async () => {
  const res = await site.app.inject({ method: 'PUT', url: '/api/draft/', headers: user.headers })
  expectError(res, 405)
  assert.deepEqual(String(res.headers.allow).split(', ').sort(), ['DELETE', 'GET', 'HEAD', 'POST'])
  const latest = await site.app.inject({ method: 'DELETE', url: '/api/packs/a/b/latest', headers: site.gate })
  expectError(latest, 405)
})

test('paths answer with and without the trailing slash', async () => {
  for (const url of ['/api/users/autocomplete/', '/api/users/autocomplete']) {
    assert.equal((await site.app.inject({ url, headers: site.gate })).statusCode, 200, url)
  }
})

test('an unsupported request content type is 415 with detail', async () => {
  const res = await site.app.inject({
    method: 'POST', url: '/api/draft/', headers: { ...user.headers, 'content-type': 'text/xml' }, payload: '<draft/>',
  })
  expectError(res, 415)
})

test('broken JSON is 400 with detail, never a 500', async () => {
  const res = await site.app.inject({
    method: 'POST', url: '/api/draft/', headers: { ...user.headers, 'content-type': 'application/json' }, payload: '{"draft": ',
  })
  expectError(res, 400, /JSON/)
})

test('responses carry basic security headers', async () => {
  const res = await site.app.inject({ url: '/healthz' })
  assert.equal(res.headers['x-content-type-options'], 'nosniff')
  assert.equal(res.headers['strict-transport-security'], undefined, 'no HSTS over plain HTTP')
})
