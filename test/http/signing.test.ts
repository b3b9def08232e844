// Signed answers: every 200 of the update-check, its batch
// and its by-hash lookups carries Packs-Signature, an Ed25519 signature over
// the exact body bytes naming the key; the public keys are at
// /api/update-check/keys/; the key is made once and kept in the database; a
// rotation makes a new key endorsed by the old one, which stays valid for the
// grace period, and every instance signs with the new key within seconds.
// Verification here uses node:crypto only, as an updater would.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, createPublicKey, verify } from 'node:crypto'
import { expectError, siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { zip } from '../helpers/fixtures.js'
import { publishPack } from '../helpers/packs.js'
import { RELOAD_INTERVAL_MS, Signer, rotateSigningKey } from '../../src/signing/service.js'

interface Key {
  id: string
  algorithm: string
  public_key: string
  created_at: string
  status: 'current' | 'previous' | 'retired'
  expires_at: string | null
  endorsement: { by: string; previous_expires_at: string; sig: string } | null
}

let now = Date.parse('2026-11-24T12:00:00.000Z')
let site: TestSite
let alice: TestUser
let archive: Buffer

const keysOf = async (): Promise<Key[]> => {
  const res = await site.app.inject({ url: '/api/update-check/keys/', headers: site.gate })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as { keys: Key[] }).keys
}
const publicKey = (key: Key) => createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(key.public_key, 'base64').toString('base64url') }, format: 'jwk' })

/** The header's parts; throws on anything but the documented form. */
function parseSignature(header: unknown): { keyId: string; sig: Buffer } {
  const match = /^keyid="([0-9a-f]{16})", sig=:([A-Za-z0-9+/]+={0,2}):$/.exec(String(header))
  assert.ok(match, `a Packs-Signature header: ${String(header)}`)
  return { keyId: match[1]!, sig: Buffer.from(match[2]!, 'base64') }
}

/** Whether the answer verifies with one of the published keys; the key's id when it does. */
async function verifiedBy(res: { body: string; rawPayload: Buffer; headers: Record<string, unknown> }): Promise<string> {
  const { keyId, sig } = parseSignature(res.headers['packs-signature'])
  const key = (await keysOf()).find((k) => k.id === keyId)
  assert.ok(key, `key ${keyId} is published`)
  assert.ok(verify(null, res.rawPayload, publicKey(key), sig), 'the signature verifies over the exact body bytes')
  return keyId
}

before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'], clock: () => now }))
  archive = await zip({ 'pack.mcmeta': JSON.stringify({ pack: { description: 'signed', pack_format: 46 } }), 'assets/x/a.txt': 'a' })
  await publishPack(site, alice, { title: 'Signed Lamps', version_name: '1.0' }, { archive })
})
after(() => site.close())

describe('signed answers', () => {
  test('one key from the first start: ed25519, its id the SHA-256 of the raw key, no endorsement', async () => {
    const keys = await keysOf()
    assert.equal(keys.length, 1)
    const [key] = keys
    assert.equal(key!.algorithm, 'ed25519')
    assert.equal(key!.status, 'current')
    assert.equal(key!.expires_at, null)
    assert.equal(key!.endorsement, null)
    assert.equal(Buffer.from(key!.public_key, 'base64').length, 32)
    assert.equal(key!.id, createHash('sha256').update(Buffer.from(key!.public_key, 'base64')).digest('hex').slice(0, 16))
    // Opening the same database again (a restart, another instance) finds the same key, not a new one.
    const again = await Signer.open(site.app.db, () => now)
    assert.equal(again.keyId, key!.id)
    expectError(await site.app.inject({ url: '/api/update-check/keys/' }), 401)
  })

  test('every 200 of the update-check, its variants, the batch and by-hash is signed over its exact bytes', async () => {
    const sha256 = createHash('sha256').update(archive).digest('hex')
    const answers = [
      await site.app.inject({ url: '/api/packs/alice/signed-lamps/latest', headers: site.gate }),
      await site.app.inject({ url: '/api/packs/alice/signed-lamps/latest?game_version=1.21.4', headers: site.gate }),
      await site.app.inject({ url: '/api/packs/alice/signed-lamps/latest?pack_format=46', headers: site.gate }),
      await site.app.inject({ method: 'POST', url: '/api/update-check/', headers: site.gate, payload: { packs: ['alice:signed-lamps', 'x:y'] } }),
      await site.app.inject({ url: `/api/update-check/by-hash/${sha256}`, headers: site.gate }),
      await site.app.inject({ method: 'POST', url: '/api/update-check/by-hash/', headers: site.gate, payload: { hashes: [sha256] } }),
    ]
    const [current] = await keysOf()
    for (const res of answers) {
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(await verifiedBy(res), current!.id)
      // One byte changed, and it no longer verifies: the check above could fail.
      const tampered = Buffer.from(res.rawPayload)
      const at = tampered.indexOf('"') + 1
      tampered[at] = tampered[at]! ^ 1
      assert.equal(verify(null, tampered, publicKey(current!), parseSignature(res.headers['packs-signature']).sig), false)
    }
    // The cached answer's signature is the same on the next request (signed once per answer and key).
    const repeat = await site.app.inject({ url: '/api/packs/alice/signed-lamps/latest', headers: site.gate })
    assert.equal(repeat.headers['packs-signature'], answers[0]!.headers['packs-signature'])
  })

  test('errors and 304s carry no signature', async () => {
    const first = await site.app.inject({ url: '/api/packs/alice/signed-lamps/latest', headers: site.gate })
    const notModified = await site.app.inject({ url: '/api/packs/alice/signed-lamps/latest', headers: { ...site.gate, 'if-none-match': String(first.headers.etag) } })
    assert.equal(notModified.statusCode, 304)
    assert.equal(notModified.headers['packs-signature'], undefined)
    const missing = await site.app.inject({ url: '/api/packs/alice/nothing/latest', headers: site.gate })
    assert.equal(missing.statusCode, 404)
    assert.equal(missing.headers['packs-signature'], undefined)
  })

  test('a rotation: a new current key endorsed by the old one, which stays valid for the grace period, then retires', async () => {
    const [old] = await keysOf()
    const rotation = await rotateSigningKey(site.app.db, 7, now)
    assert.equal(rotation.previous, old!.id)
    // This instance has not re-read the keys yet: it still signs with the old one, which is still valid.
    const before = await site.app.inject({ url: '/api/packs/alice/signed-lamps/latest', headers: site.gate })
    assert.equal(parseSignature(before.headers['packs-signature']).keyId, old!.id)

    const keys = await keysOf()
    assert.deepEqual(keys.map((k) => [k.id, k.status]), [[rotation.current, 'current'], [old!.id, 'previous']])
    const [fresh, previous] = keys
    assert.equal(previous!.expires_at, new Date(now + 7 * 86_400_000).toISOString())
    assert.equal(fresh!.expires_at, null)
    // The endorsement: the old key signed the documented statement about the new one.
    const statement = ['packs-signing-key-v1', fresh!.id, fresh!.public_key, old!.id, previous!.expires_at].join('\n')
    assert.equal(fresh!.endorsement?.by, old!.id)
    assert.equal(fresh!.endorsement?.previous_expires_at, previous!.expires_at)
    assert.ok(verify(null, Buffer.from(statement), publicKey(old!), Buffer.from(fresh!.endorsement!.sig, 'base64')))

    // Within the reload interval, requests switch to the new key by themselves (the cached answer is signed again).
    now += RELOAD_INTERVAL_MS + 1
    let keyId = ''
    for (let i = 0; i < 50 && keyId !== rotation.current; i++) {
      const res = await site.app.inject({ url: '/api/packs/alice/signed-lamps/latest', headers: site.gate })
      keyId = await verifiedBy(res)
      if (keyId !== rotation.current) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.equal(keyId, rotation.current)

    // Past the grace period the old key is retired: listed for the chain, not for signatures.
    now += 8 * 86_400_000
    assert.deepEqual((await keysOf()).map((k) => k.status), ['current', 'retired'])

    // The rotation is in the audit log, as done by the admin CLI.
    const audit = await site.app.db.selectFrom('audit_log').select(['action', 'target_type', 'target', 'actor_name']).where('action', '=', 'site.rotate-signing-key').execute()
    assert.deepEqual(audit, [{ action: 'site.rotate-signing-key', target_type: 'site', target: 'signing-key', actor_name: '(admin CLI)' }])
  })

  test('rotations chain: each new key is endorsed by the one before it', async () => {
    const second = await rotateSigningKey(site.app.db, 1, now)
    const third = await rotateSigningKey(site.app.db, 1, now)
    assert.equal(third.previous, second.current)
    const keys = await keysOf()
    assert.equal(keys.length, 4)
    assert.equal(keys[0]!.id, third.current)
    for (let i = 0; i < keys.length - 1; i++) {
      const [key, endorser] = [keys[i]!, keys[i + 1]!]
      const statement = ['packs-signing-key-v1', key.id, key.public_key, endorser.id, key.endorsement!.previous_expires_at].join('\n')
      assert.ok(verify(null, Buffer.from(statement), publicKey(endorser), Buffer.from(key.endorsement!.sig, 'base64')), `${endorser.id} endorsed ${key.id}`)
    }
    await expectRejects(() => rotateSigningKey(site.app.db, 366, now), /grace period/)
  })
})

async function expectRejects(work: () => Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(work, (error: Error) => pattern.test(error.message))
}
