// Webhook deliveries that are never lost and never doubled by us, with real servers started as `npm start`
// starts them, on this run's backend combination (SQLite + disk, or PostgreSQL + S3 + Redis), and a real
// receiver on loopback (allowed by the site's settings):
// - a server killed with kill -9 while a receiver holds its delivery open loses nothing: restarted on the
//   same site, the delivery's claim runs out and it is delivered, with the same message id (the receiver can
//   tell it is the same event) and a signature the standardwebhooks package verifies;
// - two instances on one database deliver every event once: each delivery is claimed by one of them.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { datapack } from '../helpers/fixtures.js'
import { seedDemoSite, type DemoUser } from '../helpers/demo.js'
import { LOOPBACK_WEBHOOKS, WebhookReceiver } from '../helpers/receiver.js'
import { startServer, suiteBackends, tempDataDir, type RunningServer, type SuiteBackends } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

const PASSWORD = 'webhook-e2e-password'
let receiver: WebhookReceiver
const cleanups: Array<() => Promise<void> | void> = []

before(async () => {
  receiver = await WebhookReceiver.start()
})
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  await receiver.close()
})

async function site(): Promise<{ dataDir: string; env: Record<string, string>; backends: SuiteBackends }> {
  const dataDir = tempDataDir()
  const backends = await suiteBackends()
  cleanups.push(() => fs.rmSync(dataDir, { recursive: true, force: true }), () => backends.release())
  return { dataDir, backends, env: { PACKS_MASTER_PASSWORD: PASSWORD, ...LOOPBACK_WEBHOOKS, ...backends.env } }
}

async function api(server: RunningServer, user: DemoUser, method: string, path: string, body?: object | FormData): Promise<unknown> {
  const form = body instanceof FormData
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { ...user.headers, 'x-master-password': PASSWORD, ...(body !== undefined && !form ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : form ? body : JSON.stringify(body),
  })
  const text = await res.text()
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`)
  return text === '' ? null : JSON.parse(text)
}

async function addVersion(server: RunningServer, user: DemoUser, pack: string, name: string): Promise<void> {
  const form = new FormData()
  form.set('version_name', name)
  form.set('file', new Blob([new Uint8Array(await datapack(48))]), `${name}.zip`)
  await api(server, user, 'POST', `/api/packs/${pack}/versions/`, form)
}

describe('webhooks with real servers', () => {
  test('kill -9 mid-delivery loses nothing: after a restart the delivery completes, with the same message id', async () => {
    const { dataDir, env } = await site()
    let server = await startServer({ dataDir, env })
    cleanups.push(() => server.stop().then(() => {}, () => {}))
    const demo = await seedDemoSite(server)
    const pack = demo.packs[0]!.replace(':', '/')
    const created = await api(server, demo.creator, 'POST', `/api/packs/${pack}/webhooks/`, { url: receiver.url, format: 'json', events: ['version.published'] }) as { secret: string }
    // The first try is held open by the receiver: the server is killed while it waits for the answer.
    receiver.script.push('hang')
    await addVersion(server, demo.creator, pack, '9.0.0')
    const first = await until(() => receiver.requests.find((r) => r.body.includes('"9.0.0"')), 'the first try to arrive')
    server.child.kill('SIGKILL')
    assert.equal((await server.exited).signal, 'SIGKILL')

    server = await startServer({ dataDir, env })
    const messageId = String(first.headers['webhook-id'])
    // The dead process's claim runs out (a try's timeout, 10 s, and a margin), then the restarted one delivers it.
    const retry = await until(() => receiver.tries(messageId)[1], 'the delivery after the restart', 45_000, 200)
    assert.equal(retry.body, first.body, 'the same event, byte for byte')
    const verified = new StandardWebhook(created.secret).verify(retry.body, retry.headers as Record<string, string>) as { type: string }
    assert.equal(verified.type, 'version.published')
    const hooks = await api(server, demo.creator, 'GET', `/api/packs/${pack}/webhooks/`) as { items: Array<{ id: string }> }
    const log = await until(async () => {
      const l = await api(server, demo.creator, 'GET', `/api/packs/${pack}/webhooks/${hooks.items[0]!.id}/deliveries/`) as { items: Array<{ delivery_id: string; state: string; status: number | null }> }
      return l.items.some((a) => a.delivery_id === messageId && a.state === 'delivered') ? l.items : undefined
    }, 'the delivered try in the log')
    assert.equal(log.filter((a) => a.delivery_id === messageId && a.status === 200).length, 1)
    await server.stop()
  })

  test('two instances on one database deliver each event once', async () => {
    const { dataDir, env } = await site()
    const one = await startServer({ dataDir, env })
    cleanups.push(() => one.stop().then(() => {}, () => {}))
    const demo = await seedDemoSite(one)
    const two = await startServer({ dataDir, env })
    cleanups.push(() => two.stop().then(() => {}, () => {}))
    const pack = demo.packs[1]!.replace(':', '/')
    await api(one, demo.creator, 'POST', `/api/packs/${pack}/webhooks/`, { url: receiver.url, format: 'json', events: ['version.published'] })
    await api(two, demo.creator, 'POST', `/api/packs/${pack}/webhooks/`, { url: `${receiver.url}?second`, format: 'discord', events: ['version.published'] })
    // Slow answers keep claims open while the other instance looks for work.
    receiver.otherwise = { status: 200, body: 'ok', delayMs: 50 }
    const before = receiver.requests.length
    const EVENTS = 24
    for (let i = 0; i < EVENTS; i++) await addVersion(i % 2 === 0 ? one : two, demo.creator, pack, `10.${i}.0`)
    await until(() => (receiver.requests.length - before >= EVENTS * 2 ? true : undefined), 'every delivery', 30_000, 100)
    // A moment more: a second try of anything would arrive now.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const ids = receiver.requests.slice(before).map((r) => String(r.headers['webhook-id']))
    assert.equal(ids.length, EVENTS * 2, 'one request per event and webhook')
    assert.equal(new Set(ids).size, EVENTS * 2, 'no message id twice')
    await two.stop()
    await one.stop()
  })
})
