// Cross-cutting response rules: JSON { detail } errors, 405, trailing slashes.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import Fastify, { type FastifyServerOptions } from 'fastify'
import { answerFrameworkError } from '../../src/http/errors.js'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'

let site: TestSite
let user: TestUser
before(async () => ({ site, erin: user } = await siteWith({ users: ['erin'] })))
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

test('a router error that is the server\'s fault (a failed async constraint) is a logged 500 in the { detail } shape', async () => {
  // buildApp hands Fastify answerFrameworkError; no route of ours has an async
  // constraint, so this Fastify has one that fails, to reach the 500 branch.
  const logged: { level: number; msg: string; err?: { message: string } }[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) logged.push(JSON.parse(line) as (typeof logged)[number])
      done()
    },
  })
  const tenant = {
    name: 'tenant',
    storage: () => {
      const handlers = new Map<unknown, unknown>()
      return { get: (value: unknown) => handlers.get(value) ?? null, set: (value: unknown, handler: unknown) => { handlers.set(value, handler) } }
    },
    // Three parameters make it asynchronous; it fails as a lookup in a store that is down would.
    deriveConstraint: (_request: unknown, _context: unknown, done: (error: Error | null, value?: string) => void) => { done(new Error('tenant store unreachable')) },
    validate: () => {},
    mustMatchWhenDerived: true,
  }
  const app = Fastify({
    logger: { level: 'info', stream },
    frameworkErrors: answerFrameworkError,
    // find-my-way's types describe only synchronous strategies.
    constraints: { tenant } as unknown as FastifyServerOptions['constraints'],
  })
  app.get('/api/thing/', { constraints: { tenant: 'a' } }, async () => ({ ok: true }))
  try {
    const res = await app.inject({ url: '/api/thing/' })
    assert.equal(expectError(res, 500), 'internal server error')
    const error = logged.find((line) => line.level === 50)
    assert.ok(error, `an error line was logged: ${JSON.stringify(logged)}`)
    assert.equal(error.msg, 'request failed')
    assert.match(error.err?.message ?? '', /async constraint/i)
  } finally {
    await app.close()
  }
})
