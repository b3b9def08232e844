// With REDIS_URL, instances tell each other what changed through Redis pub/sub
// (src/shared-state/redis-feed.ts) instead of asking Redis on every
// update-check. Two instances of one site (one database,
// one store, one Redis): a new version through one is the other's answer
// within 100 ms; while the other's feed is down it asks Redis on every request
// and serves nothing stale; a failed password through one makes the other ask
// Redis about that client.
// backends: scaled — the feed is Redis's; without REDIS_URL there is one instance and nothing to tell
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { buildApp } from '../../src/app.js'
import { openRedis } from '../../src/shared-state/redis.js'
import type { App } from '../../src/http/types.js'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { datapack, multipart } from '../helpers/fixtures.js'
import { publishPack } from '../helpers/packs.js'
import { eventually } from '../helpers/wait.js'

let site: TestSite
let alice: TestUser
let other: App

const versionOn = async (app: App) =>
  ((await app.inject({ url: '/api/packs/alice/lamps/latest', headers: site.gate })).json() as { version: string }).version

async function addVersion(name: string): Promise<void> {
  const body = multipart([{ name: 'version_name', value: name }, { name: 'file', value: await datapack(48, { [`data/x/${name}.json`]: '{}' }), filename: `${name}.zip` }])
  const res = await site.app.inject({ method: 'POST', url: '/api/packs/alice/lamps/versions/', headers: { ...alice.headers, ...body.headers }, payload: body.payload })
  assert.equal(res.statusCode, 201, res.body)
}

before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'] }))
  assert.ok(site.config.redisUrl, 'the scaled combination gives REDIS_URL')
  await publishPack(site, alice, { title: 'Lamps', version_name: 'v0' })
  other = await buildApp(site.config, { logger: false, sweep: false })
  await other.ready()
})
after(async () => {
  await other?.close()
  await site?.close()
})

test('a new version through one instance is the other\'s answer within 100 ms, with no Redis round trip per check', async () => {
  assert.ok(await eventually(() => other.updateCheckCache.currentWithoutAsking?.() === true), 'the feed is live')
  const delays: number[] = []
  for (let i = 1; i <= 5; i++) {
    assert.equal(await versionOn(other), `v${i - 1}`, 'cached on the other instance')
    await addVersion(`v${i}`)
    const published = performance.now()
    while ((await versionOn(other)) !== `v${i}`) {
      assert.ok(performance.now() - published < 3000, 'seen within the feed\'s outer bound')
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
    delays.push(performance.now() - published)
  }
  delays.sort((a, b) => a - b)
  assert.ok(delays[2]! < 100, `median delay ${delays[2]!.toFixed(1)} ms (all: ${delays.map((d) => d.toFixed(1)).join(', ')})`)
})

test('when the feed drops, the instance drops every answer (messages may have been missed) and the feed takes over again', async () => {
  const killer = await openRedis(site.config.redisUrl!)
  const resyncs = () => (other.updateCheckCache.usage() as unknown as { resyncs: number }).resyncs
  try {
    await versionOn(other)
    assert.ok(other.updateCheckCache.usage().answers > 0)
    const before = resyncs()
    // This site's subscribed connections drop (those on its database: the run's other tests share the
    // redis-server and must keep theirs); node-redis reconnects them.
    const database = new URL(site.config.redisUrl!).pathname.slice(1) || '0'
    const clients = String(await killer.client.sendCommand(['CLIENT', 'LIST', 'TYPE', 'pubsub']))
    const ours = clients.split('\n').filter((line) => new RegExp(`\\bdb=${database}\\b`).test(line)).map((line) => /\bid=(\d+)/.exec(line)?.[1]).filter(Boolean)
    assert.ok(ours.length > 0, `this site's subscriptions are listed: ${clients}`)
    for (const id of ours) await killer.client.sendCommand(['CLIENT', 'KILL', 'ID', id!])
    assert.ok(await eventually(() => resyncs() > before && other.updateCheckCache.currentWithoutAsking?.() === true, 5000), 'resynchronised and live')
    assert.equal(other.updateCheckCache.usage().answers, 0, 'every answer was dropped')
    await addVersion('after-drop')
    assert.ok(await eventually(async () => (await versionOn(other)) === 'after-drop', 3000), 'changes arrive again')
  } finally {
    await killer.close()
  }
})

test('a failed password through one instance makes the other ask Redis about that client', async () => {
  const limiter = other.attemptLimiters.gate
  assert.ok(await eventually(() => other.updateCheckCache.currentWithoutAsking?.() === true, 5000))
  assert.ok(await eventually(() => limiter.blockedNow?.('203.0.113.9') === 0, 3000), 'an address with no failure needs no round trip')
  const res = await site.app.inject({ url: '/api/packs/alice/lamps/latest', headers: { 'x-master-password': 'wrong' }, remoteAddress: '203.0.113.9' })
  assert.equal(res.statusCode, 401)
  assert.ok(await eventually(() => limiter.blockedNow?.('203.0.113.9') === undefined, 1000), 'now a suspect on the other instance')
  assert.equal(limiter.blockedNow?.('203.0.113.10'), 0, 'others are not')
})
