// backends: sqlite — the webhook client talks to a receiver on loopback and touches no database, storage or Redis
//
// The one HTTP client webhooks use, against a real node:http receiver on
// 127.0.0.1: a loopback URL is refused at save and at send unless the admin
// allowed the host, http only when allowed, redirects are outcomes, the timer
// covers a receiver that never answers or never finishes, at most 64 KiB of
// an endless answer are read and the connection is closed, and error
// messages never carry the URL's secret parts. DNS rebinding is shown with a
// resolver that answers a public address at save time and 127.0.0.1 at
// connect time, and with the lookup wrapper on its own.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import http from 'node:http'
import type { LookupAddress, LookupAllOptions } from 'node:dns'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import {
  DEFAULT_MAX_RESPONSE_BYTES, USER_AGENT, checkWebhookUrl, deliver, screenedLookup, type OutboundPolicy, type Resolver,
} from '../../src/webhooks/outbound.js'

interface Received {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** A receiver on 127.0.0.1 that hands every request to the current `handler`, counting connections. */
class Receiver {
  readonly server: http.Server
  connections = 0
  requests: Received[] = []
  handler: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_req, res) => res.end('ok')

  constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        this.requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() })
        this.handler(req, res)
      })
    })
    this.server.on('connection', () => {
      this.connections++
    })
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port
  }

  reset(): void {
    this.connections = 0
    this.requests = []
    this.handler = (_req, res) => res.end('ok')
  }
}

const receiver = new Receiver()
const open: OutboundPolicy = { allowHttp: true, allowHosts: new Set() }
const allow = (...hosts: string[]): OutboundPolicy => ({ allowHttp: true, allowHosts: new Set(hosts) })
const post = (url: string, body = '{"type":"test"}') => ({ url, body, headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' } })

/** A resolver that answers each name from `answers`, one answer per call (the last one again once they run out). */
function fakeResolver(answers: Record<string, ReadonlyArray<ReadonlyArray<string>>>): Resolver & { calls: string[] } {
  const calls: string[] = []
  const resolve = async (hostname: string, _options: LookupAllOptions): Promise<LookupAddress[]> => {
    const list = answers[hostname]
    const count = calls.filter((name) => name === hostname).length
    calls.push(hostname)
    if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    const answer = list[Math.min(count, list.length - 1)]!
    return answer.map((address) => ({ address, family: net.isIP(address) }))
  }
  return Object.assign(resolve, { calls })
}

before(async () => {
  receiver.server.listen(0, '127.0.0.1')
  await once(receiver.server, 'listening')
})

after(async () => {
  receiver.server.closeAllConnections()
  receiver.server.close()
  await once(receiver.server, 'close')
})

test('a loopback receiver is refused at save and at send when its host is not allowed', async () => {
  receiver.reset()
  const { port } = receiver
  const cases: Array<[string, string]> = [
    [`http://127.0.0.1:${port}/hook`, 'points to a loopback address'],
    [`http://[::1]:${port}/hook`, 'points to a loopback address'],
    [`http://[::ffff:127.0.0.1]:${port}/hook`, 'points to a loopback address'],
    [`http://[::ffff:7f00:1]:${port}/hook`, 'points to a loopback address'],
    // The URL parser reads these as 127.0.0.1 before anything is checked.
    [`http://2130706433:${port}/hook`, 'points to a loopback address'],
    [`http://0x7f.1:${port}/hook`, 'points to a loopback address'],
    [`http://localhost:${port}/hook`, 'has a host name that resolves to a loopback address'],
    [`http://LOCALHOST.:${port}/hook`, 'has a host name that resolves to a loopback address'],
    ['http://169.254.169.254/latest/meta-data/', 'points to the cloud metadata address'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'points to the cloud metadata address'],
  ]
  for (const [url, fault] of cases) {
    assert.equal(await checkWebhookUrl(url, open), fault, url)
    const outcome = await deliver(post(url), { ...open, timeoutMs: 2000 })
    assert.equal(outcome.status, null, url)
    assert.equal(outcome.error, fault.startsWith('points') ? `the URL ${fault}` : 'the host resolves to a loopback address', url)
  }
  assert.equal(receiver.connections, 0, 'nothing reached the receiver')
})

test('with the host in allowHosts the receiver is reached, by name or by address', async () => {
  receiver.reset()
  receiver.handler = (_req, res) => res.writeHead(202, { 'content-type': 'text/plain' }).end('accepted')
  const { port } = receiver
  for (const [url, policy] of [
    [`http://127.0.0.1:${port}/hooks/1?x=1&y=2#frag`, allow('127.0.0.1')],
    [`http://localhost:${port}/hooks/1?x=1&y=2`, allow('localhost')],
  ] as const) {
    assert.equal(await checkWebhookUrl(url, policy), null, url)
    const outcome = await deliver(post(url, '{"type":"test","emoji":"✨"}'), policy)
    assert.equal(outcome.error, null, url)
    assert.equal(outcome.status, 202)
    assert.equal(outcome.response, 'accepted')
    assert.equal(outcome.truncated, false)
    assert.ok(outcome.durationMs >= 0 && outcome.durationMs < 5000)
  }
  assert.equal(receiver.requests.length, 2)
  for (const request of receiver.requests) {
    assert.equal(request.method, 'POST')
    assert.equal(request.url, '/hooks/1?x=1&y=2')
    assert.equal(request.body, '{"type":"test","emoji":"✨"}')
    assert.equal(request.headers['user-agent'], USER_AGENT)
    assert.equal(request.headers['content-type'], 'application/json')
    assert.equal(request.headers['content-length'], String(Buffer.byteLength('{"type":"test","emoji":"✨"}')))
    assert.equal(request.headers['webhook-id'], 'msg_1')
  }
  // Allowing one host allows only that one.
  assert.equal(await checkWebhookUrl(`http://localhost:${port}/`, allow('127.0.0.1')), 'has a host name that resolves to a loopback address')
  assert.equal(await checkWebhookUrl(`http://127.0.0.1:${port}/`, allow('localhost')), 'points to a loopback address')
})

test('http is refused unless allowed; credentials and other schemes always', async () => {
  receiver.reset()
  const { port } = receiver
  const httpsOnly: OutboundPolicy = { allowHttp: false, allowHosts: new Set(['127.0.0.1']) }
  assert.equal(await checkWebhookUrl(`http://127.0.0.1:${port}/`, httpsOnly), 'must start with https://')
  assert.equal((await deliver(post(`http://127.0.0.1:${port}/`), httpsOnly)).error, 'the URL must start with https://')
  assert.equal(await checkWebhookUrl(`ftp://127.0.0.1:${port}/`, allow('127.0.0.1')), 'must start with https:// or http://')
  assert.equal(await checkWebhookUrl(`http://user:pw@127.0.0.1:${port}/`, allow('127.0.0.1')), 'must not contain a user name or password')
  assert.equal(await checkWebhookUrl(`https://:pw@hooks.example/`, open), 'must not contain a user name or password')
  assert.equal(await checkWebhookUrl('not a url', open), 'is not a valid URL')
  assert.equal((await deliver(post(`http://user@127.0.0.1:${port}/`), allow('127.0.0.1'))).error, 'the URL must not contain a user name or password')
  assert.equal(receiver.connections, 0)
})

test('a redirect is an outcome, never followed', async () => {
  receiver.reset()
  const { port } = receiver
  for (const [status, location] of [[302, '/elsewhere'], [307, `http://127.0.0.1:${port}/elsewhere`], [308, 'http://169.254.169.254/']] as const) {
    receiver.handler = (_req, res) => res.writeHead(status, { location }).end('moved')
    const outcome = await deliver(post(`http://127.0.0.1:${port}/hook`), allow('127.0.0.1'))
    assert.equal(outcome.status, status)
    assert.equal(outcome.error, null)
    assert.equal(outcome.response, 'moved')
  }
  assert.deepEqual(receiver.requests.map((r) => r.url), ['/hook', '/hook', '/hook'])
})

test('a receiver that never answers, or never finishes its answer, hits the timeout', async () => {
  receiver.reset()
  const { port } = receiver
  const closed: Array<Promise<unknown>> = []
  receiver.handler = (_req, res) => {
    closed.push(once(res, 'close'))
  }
  const policy = { ...allow('127.0.0.1'), timeoutMs: 300 }
  const silent = await deliver(post(`http://127.0.0.1:${port}/hook`), policy)
  assert.equal(silent.status, null)
  assert.equal(silent.error, 'no answer within 0.3 s')
  assert.ok(silent.durationMs >= 290 && silent.durationMs < 3000, `${silent.durationMs} ms`)

  receiver.handler = (_req, res) => {
    closed.push(once(res, 'close'))
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.write('first bytes, then nothing')
  }
  const dripping = await deliver(post(`http://127.0.0.1:${port}/hook`), policy)
  assert.equal(dripping.status, 200)
  assert.equal(dripping.error, 'the answer did not finish within 0.3 s')
  assert.equal(dripping.response, 'first bytes, then nothing')
  // Both connections were closed by the client, not left open (the receiver never ends either answer).
  await Promise.all(closed)
  assert.equal(closed.length, 2)
})

test('an endless answer: 64 KiB are read, then the connection is closed', async () => {
  receiver.reset()
  const { port } = receiver
  const chunk = Buffer.alloc(64 * 1024, 'a')
  const cap = 64 * 1024 * 1024
  let sent = 0
  let done: Promise<unknown> = Promise.resolve()
  receiver.handler = (_req, res) => {
    let closed = false
    let wake = () => {}
    res.on('close', () => {
      closed = true
      wake()
    })
    res.on('drain', () => wake())
    done = (async () => {
      res.writeHead(200, { 'content-type': 'text/plain' })
      // Megabytes, written as fast as the client takes them, until it hangs up (or 64 MiB, which it must not reach).
      while (!closed && sent < cap) {
        sent += chunk.length
        if (!res.write(chunk)) await new Promise<void>((resolve) => { wake = resolve })
      }
    })()
  }
  const outcome = await deliver(post(`http://127.0.0.1:${port}/hook`), allow('127.0.0.1'))
  assert.equal(outcome.status, 200)
  assert.equal(outcome.error, null)
  assert.equal(outcome.truncated, true)
  assert.equal(outcome.response.length, DEFAULT_MAX_RESPONSE_BYTES)
  assert.equal(outcome.response, 'a'.repeat(DEFAULT_MAX_RESPONSE_BYTES))
  await done
  assert.ok(sent < cap, `the receiver stopped being read after ${sent} bytes`)

  // A smaller limit; a character cut at the limit is dropped, not turned into garbage.
  receiver.handler = (_req, res) => res.end('é'.repeat(10))
  const small = await deliver(post(`http://127.0.0.1:${port}/hook`), { ...allow('127.0.0.1'), maxResponseBytes: 5 })
  assert.equal(small.response, 'éé')
  assert.equal(small.truncated, true)
  // Exactly the limit is not truncated.
  receiver.handler = (_req, res) => res.end('12345')
  const exact = await deliver(post(`http://127.0.0.1:${port}/hook`), { ...allow('127.0.0.1'), maxResponseBytes: 5 })
  assert.equal(exact.response, '12345')
  assert.equal(exact.truncated, false)
})

test('the answer is decoded safely; 4xx and 5xx are statuses, not errors', async () => {
  receiver.reset()
  const { port } = receiver
  receiver.handler = (_req, res) => res.writeHead(500).end(Buffer.from([0xff, 0x00, 0x41, 0xc3]))
  const outcome = await deliver(post(`http://127.0.0.1:${port}/hook`), allow('127.0.0.1'))
  assert.equal(outcome.status, 500)
  assert.equal(outcome.error, null)
  assert.equal(outcome.response, '\uFFFD\uFFFDA\uFFFD')
  receiver.handler = (_req, res) => res.writeHead(410).end()
  assert.deepEqual((({ status, response, error }) => ({ status, response, error }))(await deliver(post(`http://127.0.0.1:${port}/hook`), allow('127.0.0.1'))),
    { status: 410, response: '', error: null })
})

test('failures are described from their codes, never with the URL\'s secret parts', async () => {
  receiver.reset()
  const secretPath = '/api/webhooks/1234567890/Sup3rS3cretT0ken'
  const secretQuery = '?token=An0therS3cret'
  const mustNotLeak = (text: string | null) => {
    assert.ok(text !== null)
    for (const secret of ['Sup3rS3cretT0ken', 'An0therS3cret', '1234567890']) assert.ok(!text.includes(secret), text)
  }
  // A port nobody listens on.
  const closedServer = net.createServer().listen(0, '127.0.0.1')
  await once(closedServer, 'listening')
  const closedPort = (closedServer.address() as AddressInfo).port
  closedServer.close()
  await once(closedServer, 'close')
  const refused = await deliver(post(`http://127.0.0.1:${closedPort}${secretPath}${secretQuery}`), allow('127.0.0.1'))
  assert.equal(refused.error, 'the connection was refused')
  mustNotLeak(refused.error)

  // A receiver that drops the connection without answering.
  receiver.handler = (req) => req.socket.destroy()
  const reset = await deliver(post(`http://127.0.0.1:${receiver.port}${secretPath}${secretQuery}`), allow('127.0.0.1'))
  assert.equal(reset.status, null)
  assert.equal(reset.error, 'the connection was reset')
  mustNotLeak(reset.error)

  // https to a server that speaks plain HTTP: the TLS handshake fails.
  const tls = await deliver(post(`https://127.0.0.1:${receiver.port}${secretPath}${secretQuery}`), { allowHttp: false, allowHosts: new Set(['127.0.0.1']) })
  assert.equal(tls.status, null)
  assert.match(tls.error ?? '', /^the TLS connection failed \([A-Z_]+\)$/)
  mustNotLeak(tls.error)

  // A host name nobody has, and one that resolves to a private address.
  const resolver = fakeResolver({ 'lan.example': [['10.0.0.7']] })
  assert.equal(await checkWebhookUrl(`https://missing.example${secretPath}`, open, resolver), 'has a host name that was not found')
  const missing = await deliver(post(`https://missing.example${secretPath}${secretQuery}`), open, resolver)
  assert.equal(missing.error, 'the host name was not found')
  const lan = await deliver(post(`https://lan.example${secretPath}${secretQuery}`), open, resolver)
  assert.equal(lan.error, 'the host resolves to a private address')
  mustNotLeak(lan.error)

  // A header node refuses to send: nothing is sent, and the promise still resolves.
  const before = receiver.connections
  const badHeader = await deliver({ ...post(`http://127.0.0.1:${receiver.port}/`), headers: { 'x-bad': 'a\r\nInjected: yes' } }, allow('127.0.0.1'))
  assert.equal(badHeader.error, 'a request header is not valid')
  assert.equal(receiver.connections, before)
})

test('DNS rebinding: a name that resolved to a public address at save time and to loopback now is refused at connect time', async () => {
  receiver.reset()
  const { port } = receiver
  const url = `http://hooks.example:${port}/hook`
  const resolver = fakeResolver({ 'hooks.example': [['93.184.215.14'], ['127.0.0.1']] })
  assert.equal(await checkWebhookUrl(url, open, resolver), null, 'the first answer is public: saved')
  const outcome = await deliver(post(url), open, resolver)
  assert.equal(outcome.status, null)
  assert.equal(outcome.error, 'the host resolves to a loopback address')
  assert.deepEqual(resolver.calls, ['hooks.example', 'hooks.example'], 'resolved again at connect time')
  assert.equal(receiver.connections, 0)

  // One refused address in an answer refuses the whole answer, in an IPv6 form too.
  const mixed = fakeResolver({ 'hooks.example': [['93.184.215.14', '::ffff:127.0.0.1']] })
  assert.equal(await checkWebhookUrl(url, open, mixed), 'has a host name that resolves to a loopback address')
  assert.equal((await deliver(post(url), open, mixed)).error, 'the host resolves to a loopback address')
  assert.equal(receiver.connections, 0)

  // The same name, allowed by the admin, reaches the receiver through the same resolver.
  const allowed = await deliver(post(url), allow('hooks.example'), fakeResolver({ 'hooks.example': [['127.0.0.1']] }))
  assert.equal(allowed.error, null)
  assert.equal(allowed.status, 200)
  assert.equal(receiver.requests.length, 1)
})

test('the lookup wrapper in both of node\'s shapes, and on real connections', async () => {
  receiver.reset()
  const lookup = screenedLookup(fakeResolver({ 'hooks.example': [['127.0.0.1']], 'public.example': [['93.184.215.14', '2606:4700::1']] }))
  type Answer = { error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family: number | undefined }
  const call = (hostname: string, options: { all?: boolean }) => new Promise<Answer>((resolve) => {
    lookup(hostname, options, (error, address, family) => resolve({ error, address, family }))
  })
  // The list shape (`all: true`, what net.connect asks for with autoSelectFamily) and the single-address shape.
  for (const options of [{ all: true }, {}]) {
    const refused = await call('hooks.example', options)
    assert.equal(refused.error?.message, 'the host resolves to a loopback address')
    assert.equal(refused.error?.code, 'EWEBHOOKREFUSED')
  }
  assert.deepEqual(await call('public.example', { all: true }), {
    error: null, address: [{ address: '93.184.215.14', family: 4 }, { address: '2606:4700::1', family: 6 }], family: undefined,
  })
  assert.deepEqual(await call('public.example', {}), { error: null, address: '93.184.215.14', family: 4 })
  assert.equal((await call('nowhere.example', { all: true })).error?.code, 'ENOTFOUND')

  // node:net and node:http with the wrapper: the connection fails before any byte reaches the receiver.
  for (const autoSelectFamily of [true, false]) {
    const socket = net.connect({ host: 'hooks.example', port: receiver.port, lookup, autoSelectFamily })
    const [error] = await once(socket, 'error') as [Error]
    assert.equal(error.message, 'the host resolves to a loopback address')
  }
  const req = http.request({ host: 'hooks.example', port: receiver.port, method: 'POST', lookup, agent: false })
  req.end('{}')
  const [error] = await once(req, 'error') as [Error]
  assert.equal(error.message, 'the host resolves to a loopback address')
  assert.equal(receiver.connections, 0)
})
