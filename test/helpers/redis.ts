// A throwaway redis-server (Debian's package) for the tests of REDIS_URL: its
// own port and temp directory, no persistence, stopped and removed after.
// Missing binary: the tests are skipped locally with the reason printed, but
// in CI (CI set) they fail, since .ci/run installs redis-server.
// On the scaled combination scripts/run-tests.js runs one redis-server for
// every job (PACKS_TEST_REDIS_URL), and each site takes a logical database of
// its own from it: takeRedisDatabase().
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { tempDir } from './temp.js'

const BINARY = 'redis-server'

const installed = spawnSync(BINARY, ['--version'], { stdio: 'ignore' }).error === undefined

/**
 * For node:test's `skip` option: false when the Redis tests must run, else the
 * reason. In CI it is always false, so a missing binary fails startRedis().
 */
export const redisSkip: string | false = installed || process.env.CI
  ? false
  : `${BINARY} is not installed (apt-get install redis-server); the Redis tests are skipped outside CI`

if (redisSkip) console.warn(`SKIPPED: ${redisSkip}`)

/** The run's shared redis-server (scaled combination), or undefined. */
export const TEST_REDIS_URL = process.env.PACKS_TEST_REDIS_URL || undefined

export interface RedisDatabase {
  /** REDIS_URL naming the database (redis://host:port/N). */
  url: string
  /** Empties it and hands its number back for another site. */
  release(): Promise<void>
}

// Database 0 keeps the bookkeeping: numbers handed back, and the next unused one.
const FREE = 'packs-test:free-databases'
const NEXT = 'packs-test:next-database'

/**
 * A logical database of the shared server that no other site (of any job) is
 * using, so sites never see each other's keys; undefined when the run has no
 * shared server. The server has 10000 of them (run-tests.js starts it so).
 */
export async function takeRedisDatabase(): Promise<RedisDatabase | undefined> {
  if (!TEST_REDIS_URL) return undefined
  const base = new URL(TEST_REDIS_URL)
  const reused = await redisCommands(base, [['LPOP', FREE]])
  const index = reused[0] === null ? Number((await redisCommands(base, [['INCR', NEXT]]))[0]) : Number(reused[0])
  if (!(index >= 1 && index < 10_000)) throw new Error(`no free Redis database on ${TEST_REDIS_URL} (got ${index}): more than 9999 sites open at once?`)
  const url = new URL(TEST_REDIS_URL)
  url.pathname = `/${index}`
  return {
    url: url.toString(),
    async release() {
      await redisCommands(base, [['SELECT', String(index)], ['FLUSHDB'], ['SELECT', '0'], ['RPUSH', FREE, String(index)]])
    },
  }
}

/**
 * Sends commands on one fresh connection and returns their replies (RESP2:
 * simple strings, integers, bulk strings, null); an error reply rejects. A few
 * lines of protocol rather than loading a Redis client for four commands.
 */
function redisCommands(url: URL, commands: string[][]): Promise<(string | number | null)[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port || 6379), url.hostname)
    const replies: (string | number | null)[] = []
    let buffer = Buffer.alloc(0)
    const fail = (error: Error) => {
      socket.destroy()
      reject(error)
    }
    socket.once('error', fail)
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      while (true) {
        const end = buffer.indexOf('\r\n')
        if (end < 0) return
        const line = buffer.subarray(1, end).toString()
        const type = String.fromCharCode(buffer[0]!)
        let consumed = end + 2
        if (type === '-') return fail(new Error(`Redis: ${line}`))
        if (type === '$') {
          const length = Number(line)
          if (length >= 0 && buffer.length < consumed + length + 2) return
          replies.push(length < 0 ? null : buffer.subarray(consumed, consumed + length).toString())
          if (length >= 0) consumed += length + 2
        } else {
          replies.push(type === ':' ? Number(line) : line)
        }
        buffer = buffer.subarray(consumed)
        if (replies.length === commands.length) {
          socket.end()
          return resolve(replies)
        }
      }
    })
    const encode = (args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`
    socket.write(commands.map(encode).join(''))
  })
}

export interface RedisServer {
  url: string
  stop(): Promise<void>
}

/** `port`: start again where a stopped one listened (an outage and its end, for clients that reconnect). */
export async function startRedis(options: { port?: number } = {}): Promise<RedisServer> {
  if (!installed) throw new Error(`${BINARY} not found on PATH: .ci/run installs it (apt-get install redis-server)`)
  const dir = tempDir('packs-redis-')
  const port = options.port ?? await freePort()
  const child = spawn(BINARY, [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir,
    '--save', '', '--appendonly', 'no', '--daemonize', 'no', '--logfile', '',
  ], { stdio: ['ignore', 'pipe', 'pipe'] })
  try {
    await waitReady(child)
  } catch (error) {
    child.kill('SIGKILL')
    fs.rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

function waitReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => fail(new Error(`${BINARY} did not become ready in 10 s:\n${output}`)), 10_000)
    const fail = (error: Error) => {
      clearTimeout(timer)
      reject(error)
    }
    const onData = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer)
        // Keep draining the pipes so a chatty server never blocks on a full one.
        child.stdout!.removeListener('data', onData)
        child.stdout!.resume()
        resolve()
      }
    }
    child.stdout!.on('data', onData)
    child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString() })
    child.once('error', fail)
    child.once('exit', (code) => fail(new Error(`${BINARY} exited (${code}) before it was ready:\n${output}`)))
  })
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}
