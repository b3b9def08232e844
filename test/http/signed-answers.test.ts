// Signed answers are fresh and about the question asked (docs/update-protocol.md,
// "Signatures"): every 200 of the update-check, its batch, its by-hash lookups
// and the key list carries an RFC 9421 HTTP Message Signature over its status,
// its body's Content-Digest (RFC 9530), the request's method, path and query
// (and a POST's own Content-Digest), with created and expires. Verified here
// by a third-party RFC 9421 implementation (http-message-signatures on npm),
// not by our own code.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto'
import { httpbis } from 'http-message-signatures'
import type { LightMyRequestResponse } from 'fastify'
import { siteWith, expectError, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack } from '../helpers/fixtures.js'
import { publishPack } from '../helpers/packs.js'
import { rotateSigningKey } from '../../src/signing/service.js'

const TTL_SECONDS = 600
let now = Date.now()
let site: TestSite
let alice: TestUser
let archive: Buffer

before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'], clock: () => now, env: { PACKS_SIGNATURE_TTL: '10m' } }))
  archive = await datapack(48)
  await publishPack(site, alice, { title: 'Lamps', version_name: '1.0' }, { archive })
})
after(() => site.close())

interface Asked {
  method: 'GET' | 'POST'
  url: string
  headers?: Record<string, string>
  body?: string
}

const ask = (q: Asked) => site.app.inject({
  method: q.method,
  url: q.url,
  headers: { ...site.gate, ...(q.body === undefined ? {} : { 'content-type': 'application/json' }), ...q.headers },
  ...(q.body === undefined ? {} : { payload: q.body }),
})

const sha256Digest = (bytes: string | Buffer) => `sha-256=:${createHash('sha256').update(bytes).digest('base64')}:`

async function publicKeys(): Promise<Map<string, KeyObject>> {
  const res = await site.app.inject({ url: '/api/update-check/keys/', headers: site.gate })
  const keys = (res.json() as { keys: Array<{ id: string; public_key: string }> }).keys
  return new Map(keys.map((k) => [k.id, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(k.public_key, 'base64').toString('base64url') }, format: 'jwk' })]))
}

/**
 * Whether the third-party verifier accepts `res` as the answer to `asked`, with the site's published keys, at
 * real time (its clock is Date.now), requiring the components and parameters the protocol promises.
 */
async function verifies(asked: Asked, res: LightMyRequestResponse, keys?: Map<string, KeyObject>): Promise<boolean> {
  const known = keys ?? (await publicKeys())
  const request = {
    method: asked.method,
    url: `http://packs.test${asked.url}`,
    headers: { ...(asked.headers ?? {}) },
  }
  const response = { status: res.statusCode, headers: res.headers as Record<string, string> }
  try {
    const ok = await httpbis.verifyMessage({
      keyLookup: async (params) => {
        const key = typeof params.keyid === 'string' ? known.get(params.keyid) : undefined
        return key ? { id: params.keyid as string, algs: ['ed25519'], verify: async (data, signature) => verify(null, data, key, signature) } : null
      },
      requiredParams: ['created', 'expires', 'keyid', 'alg', 'tag'],
      requiredFields: ['@status', 'content-digest', '@method', '@path', '@query'],
    }, response, request)
    return ok === true
  } catch {
    return false
  }
}

function signatureParams(res: LightMyRequestResponse): { components: string; created: number; expires: number; keyid: string } {
  const input = String(res.headers['signature-input'])
  const match = /^packs=(\([^)]*\));created=(\d+);expires=(\d+);keyid="([0-9a-f]{16})";alg="ed25519";tag="packs-update"$/.exec(input)
  assert.ok(match, `Signature-Input as the protocol says: ${input}`)
  return { components: match[1]!, created: Number(match[2]), expires: Number(match[3]), keyid: match[4]! }
}

describe('signed answers (RFC 9421), checked with a third-party verifier', () => {
  test('every 200 of the update-check and the key list is signed over its digest, its question and its lifetime', async () => {
    const hash = createHash('sha256').update(archive).digest('hex')
    const questions: Asked[] = [
      { method: 'GET', url: '/api/packs/alice/lamps/latest' },
      { method: 'GET', url: '/api/packs/alice/lamps/latest?game_version=1.21.1' },
      { method: 'GET', url: '/api/packs/alice/lamps/latest?pack_format=48' },
      { method: 'POST', url: '/api/update-check/', body: JSON.stringify({ packs: ['alice:lamps'] }) },
      { method: 'GET', url: `/api/update-check/by-hash/${hash}` },
      { method: 'POST', url: '/api/update-check/by-hash/', body: JSON.stringify({ hashes: [hash] }) },
      { method: 'GET', url: '/api/update-check/keys/' },
    ]
    for (const asked of questions) {
      const res = await ask(asked)
      assert.equal(res.statusCode, 200, `${asked.url}: ${res.body}`)
      // The body's digest, computed here independently.
      assert.equal(res.headers['content-digest'], sha256Digest(res.rawPayload), asked.url)
      const params = signatureParams(res)
      assert.equal(params.components, '("@status" "content-digest" "@method";req "@path";req "@query";req)')
      assert.equal(params.expires - params.created, TTL_SECONDS, 'valid for PACKS_SIGNATURE_TTL')
      assert.ok(Math.abs(params.created - now / 1000) <= 1, 'created is when it was signed')
      assert.equal(await verifies(asked, res), true, `${asked.method} ${asked.url} verifies`)
      // The legacy body signature is still there for older clients.
      assert.match(String(res.headers['packs-signature'] ?? (asked.url.endsWith('/keys/') ? 'keyid=""' : '')), /keyid="/)
    }
  })

  test('an answer does not verify as the answer to another question, nor with another body', async () => {
    const plain: Asked = { method: 'GET', url: '/api/packs/alice/lamps/latest' }
    const forRelease: Asked = { method: 'GET', url: '/api/packs/alice/lamps/latest?game_version=1.21.1' }
    const plainAnswer = await ask(plain)
    const releaseAnswer = await ask(forRelease)
    assert.equal(plainAnswer.body, releaseAnswer.body, 'the same body: only the signature tells them apart')
    assert.equal(await verifies(plain, plainAnswer), true)
    assert.equal(await verifies(forRelease, plainAnswer), false, 'the plain answer is not the answer for 1.21.4')
    assert.equal(await verifies(plain, releaseAnswer), false)
    assert.equal(await verifies({ method: 'GET', url: '/api/packs/alice/other/latest' }, plainAnswer), false, 'nor for another pack')
    const changed = { ...plainAnswer, headers: { ...plainAnswer.headers, 'content-digest': sha256Digest(`${plainAnswer.body} `) } } as LightMyRequestResponse
    assert.equal(await verifies(plain, changed), false, 'a changed body (and its digest) does not verify')
  })

  test('a POST that sends its body\'s Content-Digest gets it covered; a digest that does not match its body is a 400', async () => {
    const body = JSON.stringify({ packs: ['alice:lamps'], game_version: '1.21.4' })
    const asked: Asked = { method: 'POST', url: '/api/update-check/', body, headers: { 'content-digest': sha256Digest(body) } }
    const res = await ask(asked)
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(signatureParams(res).components, '("@status" "content-digest" "@method";req "@path";req "@query";req "content-digest";req)')
    assert.equal(await verifies(asked, res), true)
    // The same answer presented as the answer to another question (the batch for another game) does not verify.
    const other = JSON.stringify({ packs: ['alice:lamps'], game_version: '1.20.1' })
    assert.equal(await verifies({ ...asked, body: other, headers: { 'content-digest': sha256Digest(other) } }, res), false)

    expectError(await ask({ ...asked, headers: { 'content-digest': sha256Digest(other) } }), 400, /Content-Digest header does not match the request body/)
    expectError(await ask({ ...asked, headers: { 'content-digest': 'sha-256=:not base64 at all:' } }), 400, /Content-Digest/)
    // An algorithm the site does not know is left alone (RFC 9530): nothing to check, nothing covered.
    const unknown = await ask({ ...asked, headers: { 'content-digest': 'md5=:AAAA:' } })
    assert.equal(unknown.statusCode, 200, unknown.body)
    assert.equal(signatureParams(unknown).components, '("@status" "content-digest" "@method";req "@path";req "@query";req)')
  })

  test('a cached answer is signed once per half lifetime, not per request; an expired one does not verify', async () => {
    const asked: Asked = { method: 'GET', url: '/api/packs/alice/lamps/latest' }
    const first = await ask(asked)
    const made = site.app.signing.signaturesMade
    const second = await ask(asked)
    assert.equal(second.headers.signature, first.headers.signature, 'the same signature')
    assert.equal(site.app.signing.signaturesMade, made, 'nothing signed again')

    now += (TTL_SECONDS / 2) * 1000
    const later = await ask(asked)
    assert.notEqual(later.headers.signature, first.headers.signature, 'half the lifetime gone: signed anew')
    assert.equal(signatureParams(later).created, signatureParams(first).created + TTL_SECONDS / 2)
    assert.equal(site.app.signing.signaturesMade, made + 1)

    // Signed an hour ago (this site's clock) with a 10-minute lifetime: the third-party verifier, on real time, refuses it.
    now = Date.now() - 3_600_000
    try {
      const stale: Asked = { method: 'GET', url: '/api/packs/alice/lamps/latest?game_version=1.21' }
      const old = await ask(stale)
      assert.equal(old.statusCode, 200, old.body)
      assert.equal(await verifies(stale, old), false, 'expired')
    } finally {
      now = Date.now()
    }
  })

  test('after a rotation with no grace period the new key signs at once, and the signed key list says the old one is retired', async () => {
    const before = await ask({ method: 'GET', url: '/api/packs/alice/lamps/latest' })
    const oldKey = signatureParams(before).keyid
    const rotation = await rotateSigningKey(site.app.db, 0, now)
    assert.equal(rotation.previous, oldKey)
    await site.app.signing.reload()
    const keysAsked: Asked = { method: 'GET', url: '/api/update-check/keys/' }
    const keysAnswer = await ask(keysAsked)
    const keys = (keysAnswer.json() as { keys: Array<{ id: string; status: string; expires_at: string | null }> }).keys
    const old = keys.find((k) => k.id === oldKey)!
    assert.equal(old.status, 'retired')
    assert.ok(Date.parse(old.expires_at!) <= now, 'its expires_at is the rotation')
    assert.equal(signatureParams(keysAnswer).keyid, rotation.current, 'the list is signed by the new key')
    assert.equal(await verifies(keysAsked, keysAnswer), true)
    const after = await ask({ method: 'GET', url: '/api/packs/alice/lamps/latest' })
    assert.equal(signatureParams(after).keyid, rotation.current, 'a cached answer is signed again with the new key')
    assert.equal(await verifies({ method: 'GET', url: '/api/packs/alice/lamps/latest' }, after), true)
  })
})
