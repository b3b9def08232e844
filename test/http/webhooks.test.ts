// A pack's webhooks end to end through the API, against a real receiver on loopback (allowed by the site's
// settings, as an admin would allow an internal host): adding one (the secret shown once, the address
// checked and sealed), JSON deliveries verified with the `standardwebhooks` package, Discord messages,
// retries with the same message id when the receiver fails, times out or answers slowly and then recovers,
// the switch-off after a day of failures and the owner's notification, the delivery log, a test event,
// delivering again, and the bounds on webhooks and on the outbox. The site's clock is moved instead of
// waiting out the backoff; the dispatcher reads the outbox on its own timer or when told.
import { after, before, beforeEach, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { siteWith, type TestSite, type TestUser, signIn, type Session } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack, type PackJson } from '../helpers/packs.js'
import { LOOPBACK_WEBHOOKS, WebhookReceiver } from '../helpers/receiver.js'
import { until } from '../helpers/wait.js'
import { MAX_TRIES, RETRY_DELAYS_MS } from '../../src/webhooks/dispatcher.js'
import { MAX_PENDING_PER_WEBHOOK } from '../../src/events/record.js'
import { WEBHOOKS_PER_PACK } from '../../src/api/webhooks.js'

let site: TestSite
let alice: TestUser
let bob: TestUser
let root: TestUser
let receiver: WebhookReceiver
let pack: PackJson
/** How far the site's clock is ahead of the real one. */
let ahead = 0
const DAY = 86_400_000

before(async () => {
  receiver = await WebhookReceiver.start()
  ;({ site, alice, bob, root } = await siteWith({
    users: ['alice', 'bob'], staff: ['root'], env: LOOPBACK_WEBHOOKS, clock: () => Date.now() + ahead, webhooks: { timeoutMs: 1000 },
  }))
  pack = await publishPack(site, alice, { title: 'Glow Moss', description: 'Moss that glows.' })
})
after(async () => {
  await site.close()
  await receiver.close()
})
beforeEach(() => {
  receiver.requests.length = 0
  receiver.script.length = 0
  receiver.otherwise = { status: 200, body: 'thanks' }
})

const api = (path = '') => `/api/packs/${pack.namespace}/${pack.pack_id}/webhooks/${path}`

async function call(method: string, url: string, user: TestUser, payload?: unknown) {
  return site.app.inject({ method: method as 'GET', url, headers: user.headers, ...(payload === undefined ? {} : { payload: payload as object }) })
}

async function addWebhook(body: Record<string, unknown>, user: TestUser = alice): Promise<{ id: string; secret: string }> {
  const res = await call('POST', api(), user, { url: receiver.url, format: 'json', events: ['version.published'], ...body })
  assert.equal(res.statusCode, 201, res.body)
  return res.json() as { id: string; secret: string }
}

async function addVersion(name: string, changelog = `What ${name} brings`): Promise<void> {
  const body = multipart([
    { name: 'version_name', value: name }, { name: 'changelog', value: changelog },
    { name: 'file', value: await datapack(48), filename: 'v.zip', contentType: 'application/zip' },
  ])
  const res = await site.app.inject({ method: 'POST', url: `/api/packs/${pack.namespace}/${pack.pack_id}/versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
}

/** Moves the site's clock on and has the dispatcher read the outbox now. */
async function later(ms: number): Promise<void> {
  ahead += ms
  await site.app.webhookDispatcher.tick()
}

async function log(id: string): Promise<Array<{ delivery_id: string; status: number | null; error: string | null; state: string; attempt: number; event: string; response: string }>> {
  const res = await call('GET', api(`${id}/deliveries/`), alice)
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as { items: Array<{ delivery_id: string; status: number | null; error: string | null; state: string; attempt: number; event: string; response: string }> }).items
}

async function remove(id: string): Promise<void> {
  assert.equal((await call('DELETE', api(`${id}/`), alice)).statusCode, 204)
}

describe('adding a webhook', () => {
  test('shows the secret once, keeps the address and the secret sealed, and lists it shortened', async () => {
    const url = `${receiver.url}/with/a/long/secret/path/token-abcdef?key=hunter2`
    const created = await addWebhook({ url, format: 'discord', events: ['version.published', 'pack.edited'] })
    assert.match(created.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
    const listed = (await call('GET', api(), alice)).json() as { items: Array<Record<string, unknown>> }
    const shown = listed.items.find((w) => w.id === created.id)!
    assert.equal(shown.secret, undefined)
    assert.equal(shown.active, true)
    assert.deepEqual(shown.events, ['version.published', 'pack.edited'])
    assert.ok(!String(shown.url).includes('token-abcdef') && !String(shown.url).includes('hunter2'), `shortened: ${String(shown.url)}`)
    const row = await site.app.db.selectFrom('webhooks').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow()
    for (const secret of ['token-abcdef', 'hunter2', created.secret, receiver.url]) {
      assert.ok(!row.url_sealed.includes(secret) && !row.secret_sealed.includes(secret), 'sealed, not stored in the clear')
    }
    await remove(created.id)
  })

  test('refuses addresses that lead inside, and what is not a web address, with a readable reason', async () => {
    for (const url of ['https://10.0.0.7/hook', 'https://169.254.169.254/latest/meta-data/', 'https://[::1]/hook', 'https://localhost/hook',
      'https://100.64.0.1/', 'https://[::ffff:127.0.0.1]/', 'ftp://example.org/hook', 'https://user:pass@127.0.0.1/', 'not a url', 'https://0.0.0.0/']) {
      const res = await call('POST', api(), alice, { url, format: 'json', events: ['version.published'] })
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`)
      assert.match((res.json() as { detail: string }).detail, /url/i)
    }
    const long = await call('POST', api(), alice, { url: `https://example.org/${'a'.repeat(5000)}`, format: 'json', events: ['version.published'] })
    assert.equal(long.statusCode, 400)
    const noEvents = await call('POST', api(), alice, { url: receiver.url, format: 'json', events: [] })
    assert.equal(noEvents.statusCode, 400)
    const unknown = await call('POST', api(), alice, { url: receiver.url, format: 'json', events: ['pack.exploded'] })
    assert.equal(unknown.statusCode, 400)
  })

  test('is for the pack\'s owner, its maintainers and staff: to anyone else the pack is not there', async () => {
    const res = await call('POST', api(), bob, { url: receiver.url, format: 'json', events: ['version.published'] })
    assert.equal(res.statusCode, 404)
    assert.equal((await call('GET', api(), bob)).statusCode, 404)
    assert.equal((await site.app.inject({ url: api(), headers: site.gate })).statusCode, 401)
    const byStaff = await addWebhook({}, root)
    assert.equal((await call('GET', api(`${byStaff.id}/`), root)).statusCode, 200)
    await remove(byStaff.id)
  })

  test(`a pack holds at most ${WEBHOOKS_PER_PACK}`, async () => {
    const ids: string[] = []
    for (let i = 0; i < WEBHOOKS_PER_PACK; i++) ids.push((await addWebhook({})).id)
    const over = await call('POST', api(), alice, { url: receiver.url, format: 'json', events: ['version.published'] })
    assert.equal(over.statusCode, 409)
    assert.match((over.json() as { detail: string }).detail, /at most/)
    for (const id of ids) await remove(id)
  })
})

describe('deliveries', () => {
  test('a json webhook gets the event signed per Standard Webhooks, verified by the standardwebhooks package', async () => {
    const { id, secret } = await addWebhook({ events: ['version.published', 'pack.edited'] })
    await addVersion('2.0.0', 'Brighter moss\n\n<script>alert(1)</script>')
    const [request] = await until(() => (receiver.requests.length > 0 ? receiver.requests : undefined), 'the delivery')
    const verified = new StandardWebhook(secret).verify(request!.body, {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    }) as { type: string; data: { pack: { url: string; title: string }; version: { name: string; changelog: string } } }
    assert.equal(verified.type, 'version.published')
    assert.equal(verified.data.version.name, '2.0.0')
    assert.match(verified.data.version.changelog, /Brighter moss/)
    assert.equal(verified.data.pack.title, 'Glow Moss')
    assert.match(verified.data.pack.url, /^http:\/\/.+\/packs\/alice\/glow-moss\/$/)
    assert.equal(request!.headers['content-type'], 'application/json')
    // Another secret, or a changed body, does not verify.
    assert.throws(() => new StandardWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(request!.body, request!.headers as Record<string, string>))
    assert.throws(() => new StandardWebhook(secret).verify(request!.body.replace('2.0.0', '2.0.1'), request!.headers as Record<string, string>))
    const entries = await until(async () => { const l = await log(id); return l.length > 0 ? l : undefined }, 'the delivery log')
    assert.equal(entries[0]!.status, 200)
    assert.equal(entries[0]!.state, 'delivered')
    assert.equal(entries[0]!.response, 'thanks')
    assert.equal(entries[0]!.delivery_id, request!.headers['webhook-id'])
    // An edit of the pack is an event it asked for too.
    const current = (await call('GET', `/api/packs/${pack.namespace}/${pack.pack_id}/`, alice)).json() as { revision: number }
    assert.equal((await call('PATCH', `/api/packs/${pack.namespace}/${pack.pack_id}/`, alice, { revision: current.revision, summary: 'Moss, glowing.' })).statusCode, 200)
    const edited = await until(() => receiver.requests.find((r) => JSON.parse(r.body).type === 'pack.edited'), 'the edit event')
    assert.deepEqual((JSON.parse(edited.body) as { data: { changes: string[] } }).data.changes, ['summary'])
    await remove(id)
  })

  test('a discord webhook gets a message with an embed: title, version, changelog, link', async () => {
    const { id } = await addWebhook({ format: 'discord' })
    await addVersion('2.1.0', `Changelog ${'x'.repeat(6000)}`)
    const request = await until(() => receiver.requests[0], 'the Discord message')
    const message = JSON.parse(request.body) as { embeds: Array<{ title: string; url: string; description: string; timestamp: string }>; allowed_mentions: unknown }
    assert.equal(message.embeds.length, 1)
    assert.match(message.embeds[0]!.title, /Glow Moss/)
    assert.match(message.embeds[0]!.title, /2\.1\.0/)
    assert.ok(message.embeds[0]!.description.length <= 4096)
    assert.match(message.embeds[0]!.url, /\/packs\/alice\/glow-moss\/#version-2\.1\.0$/)
    assert.deepEqual(message.allowed_mentions, { parse: [] })
    await remove(id)
  })

  test('a discord embed shows the pack\'s thumbnail through a link that opens without the gate', async () => {
    const lit = await publishPack(site, alice, { title: 'Lit Lanterns' }, { thumbnail: true })
    const base = `/api/packs/${lit.namespace}/${lit.pack_id}/`
    const hook = await call('POST', `${base}webhooks/`, alice, { url: receiver.url, format: 'discord', events: ['version.published'] })
    assert.equal(hook.statusCode, 201, hook.body)
    const body = multipart([{ name: 'version_name', value: '1.1' }, { name: 'file', value: await datapack(48), filename: 'v.zip', contentType: 'application/zip' }])
    const added = await site.app.inject({ method: 'POST', url: `${base}versions/`, headers: { ...alice.headers, ...body.headers }, payload: body.payload })
    assert.equal(added.statusCode, 201, added.body)
    const request = await until(() => receiver.requests.find((r) => r.body.includes('Lit Lanterns')), 'the Discord message')
    const thumbnail = (JSON.parse(request.body) as { embeds: Array<{ thumbnail?: { url: string } }> }).embeds[0]!.thumbnail?.url
    assert.match(thumbnail ?? '', /\/api\/modrinth\/files\/[0-9a-f-]{36}\?expires=\d+&signature=/)
    // Discord fetches it with no password: the signed link is what lets it.
    const image = await site.app.inject({ url: new URL(thumbnail!).pathname + new URL(thumbnail!).search })
    assert.equal(image.statusCode, 200)
    assert.match(String(image.headers['content-type']), /^image\/png/)
    assert.equal((await call('DELETE', `${base}webhooks/${(hook.json() as { id: string }).id}/`, alice)).statusCode, 204)
  })

  test('a receiver that fails, times out and answers slowly gets the same message id on every try until it recovers', async () => {
    const { id } = await addWebhook({})
    receiver.script.push({ status: 500, body: 'oops\u0000\u001b[31m' }, 'hang', { status: 503 }, { status: 200, body: 'finally', delayMs: 300 })
    await addVersion('3.0.0')
    await until(() => receiver.requests[0], 'the first try')
    const messageId = String(receiver.requests[0]!.headers['webhook-id'])
    // The second try waits about a minute (with jitter, at most 1.2 min), the third about 3.2 more.
    for (const wait of [RETRY_DELAYS_MS[0]! * 1.25, RETRY_DELAYS_MS[1]! * 1.25, RETRY_DELAYS_MS[2]! * 1.25]) {
      const before = receiver.requests.length
      await until(async () => (await log(id)).length >= before ? true : undefined, 'the try recorded', 5000)
      await later(wait)
      await until(() => (receiver.requests.length > before ? true : undefined), 'the next try', 5000)
    }
    const entries = await until(async () => { const l = await log(id); return l.length >= 4 ? l : undefined }, 'four tries in the log')
    assert.deepEqual(entries.map((e) => e.status).reverse(), [500, null, 503, 200])
    assert.deepEqual(entries.map((e) => e.attempt).reverse(), [1, 2, 3, 4])
    assert.match(entries[2]!.error ?? '', /no answer within 1 s/)
    assert.ok(!/[\u0000-\u0008\u000b-\u001f]/.test(entries[3]!.response), 'no control characters kept')
    assert.equal(entries[0]!.state, 'delivered')
    assert.equal(receiver.tries(messageId).length, 4)
    const webhook = (await call('GET', api(`${id}/`), alice)).json() as { failures: number; active: boolean }
    assert.equal(webhook.failures, 0)
    assert.equal(webhook.active, true)
    await remove(id)
  })

  test(`after ${MAX_TRIES} failed tries over a day the webhook is switched off and its owner told`, async () => {
    const { id } = await addWebhook({})
    receiver.otherwise = { status: 410, body: 'gone' }
    await addVersion('4.0.0')
    await until(() => receiver.requests[0], 'the first try')
    for (let i = 1; i < MAX_TRIES; i++) {
      const seen = receiver.requests.length
      await until(async () => ((await log(id)).length >= seen ? true : undefined), 'the try recorded')
      await later(RETRY_DELAYS_MS[i - 1]! * 1.25)
      await until(() => (receiver.requests.length > seen ? true : undefined), `try ${i + 1}`)
    }
    const webhook = await until(async () => {
      const w = (await call('GET', api(`${id}/`), alice)).json() as { active: boolean; disabled_reason: string | null }
      return w.active ? undefined : w
    }, 'the webhook switched off')
    assert.match(webhook.disabled_reason ?? '', /answered 410/)
    assert.equal(receiver.requests.length, MAX_TRIES)
    const notices = (await call('GET', '/api/notifications/', alice)).json() as { items: Array<{ kind: string; text: string }> }
    assert.ok(notices.items.some((n) => n.kind === 'webhook.disabled'), JSON.stringify(notices.items))
    // Switched off, it gets nothing; switched on again it does.
    await addVersion('4.0.1')
    await later(60_000)
    assert.equal(receiver.requests.length, MAX_TRIES)
    receiver.otherwise = { status: 200 }
    assert.equal((await call('PATCH', api(`${id}/`), alice, { active: true })).statusCode, 200)
    await addVersion('4.0.2')
    await until(() => receiver.requests.find((r) => JSON.parse(r.body).data.version.name === '4.0.2'), 'a delivery once on again')
    await remove(id)
    ahead += DAY
  })

  test('a test event, and delivering again, keep the message id; the log holds the last tries', async () => {
    const { id } = await addWebhook({})
    const queued = await call('POST', api(`${id}/test/`), alice)
    assert.equal(queued.statusCode, 202, queued.body)
    const messageId = (queued.json() as { delivery_id: string }).delivery_id
    await until(() => receiver.tries(messageId)[0], 'the test event')
    assert.equal(JSON.parse(receiver.tries(messageId)[0]!.body).type, 'webhook.test')
    await until(async () => ((await log(id)).length > 0 ? true : undefined), 'the try recorded')
    const again = await call('POST', api(`${id}/deliveries/${messageId}/redeliver/`), alice)
    assert.equal(again.statusCode, 202, again.body)
    await until(() => (receiver.tries(messageId).length === 2 ? true : undefined), 'delivered again')
    assert.equal((await call('POST', api(`${id}/deliveries/msg_nothing/redeliver/`), alice)).statusCode, 404)
    assert.equal((await call('POST', api(`${randomUUID()}/test/`), alice)).statusCode, 404)
    await remove(id)
  })

  test('an endpoint that is down cannot fill the outbox: past its bound, events are not queued for it', async () => {
    const { id } = await addWebhook({})
    const now = new Date(Date.now() + ahead + DAY).toISOString()
    const rows = Array.from({ length: MAX_PENDING_PER_WEBHOOK }, () => ({
      id: `msg_${randomUUID().replaceAll('-', '')}`, webhook_id: id, event: 'version.published', payload: '{}', created_at: now, state: 'pending',
      attempts: 1, next_attempt_at: now, claimed_until: null, claimed_by: null, finished_at: null,
    }))
    for (let i = 0; i < rows.length; i += 200) await site.app.db.insertInto('webhook_deliveries').values(rows.slice(i, i + 200)).execute()
    await addVersion('5.0.0')
    const pending = await site.app.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('webhook_id', '=', id).executeTakeFirstOrThrow()
    assert.equal(Number(pending.n), MAX_PENDING_PER_WEBHOOK)
    await remove(id)
    const left = await site.app.db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('webhook_id', '=', id).executeTakeFirstOrThrow()
    assert.equal(Number(left.n), 0, 'removing the webhook removes its deliveries')
  })
})

describe('the webhooks pages', () => {
  const HTML = { accept: 'text/html' }
  const page = (url: string, who: Session) => site.app.inject({ url, headers: { ...HTML, ...site.gate, cookie: who.cookie } })
  const post = (url: string, who: Session, fields: Array<[string, string]> = []) => site.app.inject({
    method: 'POST', url, headers: { ...HTML, ...site.gate, cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams([['csrf_token', who.csrf], ...fields]).toString(),
  })
  const base = () => `/packs/${pack.namespace}/${pack.pack_id}/webhooks/`

  test('add one with a plain form, see its secret once, send a test event and read it in the log', async () => {
    const session = await signIn(site, alice)
    const packPage = await page(`/packs/${pack.namespace}/${pack.pack_id}/`, session)
    assert.match(packPage.body, /href="\/packs\/alice\/glow-moss\/webhooks\/">Webhooks</)
    const empty = await page(base(), session)
    assert.equal(empty.statusCode, 200)
    assert.match(empty.body, /None yet/)
    const refused = await post(base(), session, [['url', 'https://192.168.1.1/hook'], ['format', 'json'], ['events', 'version.published']])
    assert.equal(refused.statusCode, 400)
    assert.match(refused.body, /role="alert">Url is refused: .*private/)
    const added = await post(base(), session, [['url', receiver.url], ['format', 'json'], ['events', 'version.published'], ['events', 'pack.hidden']])
    assert.equal(added.statusCode, 200, added.body)
    const secret = /<code class="secret" id="webhook-secret">(whsec_[^<]+)<\/code>/.exec(added.body)?.[1]
    assert.ok(secret, 'the secret is on the page')
    const href = /<a href="(\/packs\/alice\/glow-moss\/webhooks\/[0-9a-f-]{36}\/)">Open the webhook/.exec(added.body)?.[1]
    assert.ok(href)
    const listed = await page(base(), session)
    assert.ok(!listed.body.includes(secret), 'never shown again')
    const test = await post(`${href}test/`, session)
    assert.equal(test.statusCode, 303)
    assert.equal(test.headers.location, `${href}?done=test`)
    await until(() => receiver.requests.find((r) => JSON.parse(r.body).type === 'webhook.test'), 'the test event')
    const logged = await until(async () => {
      const body = (await page(href, session)).body
      return body.includes('<strong>200</strong>') ? body : undefined
    }, 'the try on the page')
    assert.match(logged, /webhook\.test/)
    assert.match(logged, /Deliver again/)
    // Switching it off by the form (no "active" box ticked), then removing it.
    const off = await post(href, session, [['events', 'version.published']])
    assert.equal(off.statusCode, 303)
    assert.match((await page(href, session)).body, /Switched off/)
    assert.equal((await post(`${href}delete/`, session)).statusCode, 303)
    assert.equal((await page(href, session)).statusCode, 404)
  })

  test('someone outside the team gets no page and no form post through', async () => {
    const session = await signIn(site, bob)
    assert.equal((await page(base(), session)).statusCode, 404)
    const res = await post(base(), session, [['url', receiver.url], ['format', 'json'], ['events', 'version.published']])
    assert.equal(res.statusCode, 404)
  })
})
