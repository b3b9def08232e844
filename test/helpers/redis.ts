// A throwaway redis-server (Debian's package) for the tests of REDIS_URL: its
// own port and temp directory, no persistence, stopped and removed after.
// Missing binary: the tests are skipped locally with the reason printed, but
// in CI (CI set) they fail, since .ci/run installs redis-server.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'

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

export interface RedisServer {
  url: string
  stop(): Promise<void>
}

/** `port`: start again where a stopped one listened (an outage and its end, for clients that reconnect). */
export async function startRedis(options: { port?: number } = {}): Promise<RedisServer> {
  if (!installed) throw new Error(`${BINARY} not found on PATH: .ci/run installs it (apt-get install redis-server)`)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'packs-redis-'))
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
