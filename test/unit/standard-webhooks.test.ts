// Signatures per the Standard Webhooks specification, checked by the
// specification's own JavaScript library (the `standardwebhooks` package), as
// a receiver would check them: what we sign verifies, and a changed body, id,
// timestamp or secret does not.
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import {
  MAX_SECRET_BYTES, MIN_SECRET_BYTES, SECRET_PREFIX, newWebhookSecret, signedHeaders, webhookSecretKey,
} from '../../src/webhooks/standard-webhooks.js'
import { newMessageId } from '../../src/events/record.js'

const now = () => Math.floor(Date.now() / 1000)
const body = JSON.stringify({ type: 'version.published', timestamp: '2026-11-24T12:00:00.000Z', data: { pack: 'demo:faithful', version: '1.2 ✨' } })

test('a signature made here verifies with the standardwebhooks package', () => {
  const secret = newWebhookSecret()
  const id = newMessageId()
  const headers = signedHeaders(secret, id, now(), body)
  assert.deepEqual(Object.keys(headers).sort(), ['webhook-id', 'webhook-signature', 'webhook-timestamp'])
  assert.equal(headers['webhook-id'], id)
  assert.match(headers['webhook-timestamp'], /^\d+$/)
  assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/)
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body))
  // The same bytes as a Buffer sign the same.
  assert.deepEqual(signedHeaders(secret, id, Number(headers['webhook-timestamp']), Buffer.from(body)), headers)
  assert.deepEqual(new Webhook(secret).verify(Buffer.from(body), headers), JSON.parse(body))
})

test('a changed body, id, timestamp or secret fails verification', () => {
  const secret = newWebhookSecret()
  const timestamp = now()
  const headers = signedHeaders(secret, 'msg_abc', timestamp, body)
  const webhook = new Webhook(secret)
  assert.throws(() => webhook.verify(body.replace('1.2', '1.3'), headers), /No matching signature found/)
  assert.throws(() => webhook.verify(`${body} `, headers), /No matching signature found/)
  assert.throws(() => webhook.verify(body, { ...headers, 'webhook-id': 'msg_abd' }), /No matching signature found/)
  assert.throws(() => webhook.verify(body, { ...headers, 'webhook-timestamp': String(timestamp - 1) }), /No matching signature found/)
  assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers), /No matching signature found/)
})

test('the signature is HMAC-SHA256 keyed with the secret\'s bytes over "id.timestamp.body"', () => {
  // A fixed secret, id and time, against the HMAC computed here by hand.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
  const headers = signedHeaders(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')
  const expected = createHmac('sha256', Buffer.from('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'base64'))
    .update('msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.{"test": 2432232314}').digest('base64')
  assert.equal(headers['webhook-signature'], `v1,${expected}`)
  assert.equal(headers['webhook-timestamp'], '1614265330')
})

test('new secrets are whsec_ and 24 to 64 random bytes', () => {
  const secret = newWebhookSecret()
  assert.ok(secret.startsWith(SECRET_PREFIX))
  assert.equal(webhookSecretKey(secret).length, 32)
  assert.notEqual(newWebhookSecret(), secret)
  assert.equal(webhookSecretKey(newWebhookSecret(MIN_SECRET_BYTES)).length, 24)
  assert.equal(webhookSecretKey(newWebhookSecret(MAX_SECRET_BYTES)).length, 64)
  assert.throws(() => newWebhookSecret(16), RangeError)
  assert.throws(() => newWebhookSecret(65), RangeError)
  // Secrets of every allowed size verify.
  for (const size of [MIN_SECRET_BYTES, MAX_SECRET_BYTES]) {
    const s = newWebhookSecret(size)
    assert.ok(new Webhook(s).verify(body, signedHeaders(s, 'msg_1', now(), body)))
  }
})

test('a malformed secret, id or timestamp is refused without echoing the secret', () => {
  const good = newWebhookSecret()
  const short = `${SECRET_PREFIX}${Buffer.alloc(16, 7).toString('base64')}`
  for (const secret of [good.slice(SECRET_PREFIX.length), short, `${good}!`, `${good.slice(0, -1)}`, 'whsec_', '']) {
    assert.throws(() => signedHeaders(secret, 'msg_1', now(), body), (error: Error) => {
      assert.ok(error instanceof TypeError)
      if (secret.length > SECRET_PREFIX.length) assert.ok(!error.message.includes(secret.slice(SECRET_PREFIX.length)), error.message)
      return true
    }, secret)
  }
  for (const id of ['', 'msg.1', 'msg 1', 'a'.repeat(129), 'msg\n1']) {
    assert.throws(() => signedHeaders(good, id, now(), body), TypeError, JSON.stringify(id))
  }
  for (const timestamp of [-1, 1.5, Number.NaN, 2 ** 53]) {
    assert.throws(() => signedHeaders(good, 'msg_1', timestamp, body), TypeError, String(timestamp))
  }
})

test('message ids are msg_ and a random UUID (122 random bits), unique per delivery', () => {
  const id = newMessageId()
  assert.match(id, /^msg_[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/)
  assert.notEqual(newMessageId(), id)
})
