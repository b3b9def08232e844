// The production entry as an operator runs it: `npm start` (a real npm process) and what systemd runs
// (`node dist/src/server.js`). It must say in one line what it runs on, warn about shapes that lose
// files or answer inconsistently, build and write nothing outside the data directory, and stop cleanly
// on SIGTERM or SIGINT sent to the process a service manager knows, even with a request in flight.
// On the scaled combination the same server runs on PostgreSQL + S3 + Redis, and the mismatched shapes
// (PostgreSQL with local files, PostgreSQL without Redis) are started on purpose.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { ROOT, freePort, startServer, suiteBackends, tempDataDir, type SuiteBackends } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

const PASSWORD = 'production-start-password'
const RUNNING_LINE = /^\{.*"msg":"packs: running on .*\}$/m

interface LogLine { level: number; msg: string; database?: string; storage?: string; sharedState?: string; workers?: number }

function lines(stdout: string): LogLine[] {
  return stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine)
}

/** Warnings about the configuration's shape; not the one about a build older than its sources, which only
 * shows when someone edits src/ while the tests run. */
function shapeWarnings(stdout: string): string[] {
  return lines(stdout).filter((l) => l.level === 40 && !l.msg.includes('changed after the last build')).map((l) => l.msg)
}


describe('the production entry', { timeout: 120_000 }, () => {
  let backends: SuiteBackends
  const dirs: string[] = []

  before(async () => {
    backends = await suiteBackends()
  })

  after(async () => {
    await backends?.release()
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  })

  test('start-up names the database, the storage, shared state and the worker count, secrets hidden', async () => {
    const server = await startServer({ env: { PACKS_MASTER_PASSWORD: PASSWORD, ...backends.env } })
    dirs.push(server.dataDir)
    try {
      await server.waitForStdout(RUNNING_LINE)
      const running = lines(server.stdout()).filter((line) => line.msg.startsWith('packs: running on'))
      assert.equal(running.length, 1, 'one start-up line')
      const line = running[0]!
      assert.equal(line.level, 30)
      assert.equal(line.workers, 1)
      if (backends.env.DATABASE_URL) {
        assert.match(line.database!, /^PostgreSQL postgres(ql)?:\/\//)
        assert.match(line.storage!, /^S3 s3:\/\//)
        assert.match(line.sharedState!, /^Redis redis:\/\//)
        // The shapes match: nothing to warn about.
        assert.deepEqual(shapeWarnings(server.stdout()), [])
        // The database URL's password never reaches the log (the test cluster's URL carries one, if any).
        const password = new URL(backends.env.DATABASE_URL).password
        if (password) assert.ok(!server.stdout().includes(password), 'no database password in the log')
      } else {
        assert.equal(line.database, `SQLite ${path.join(server.dataDir, 'packs.db')}`)
        assert.equal(line.storage, `local disk ${path.join(server.dataDir, 'files')}`)
        assert.equal(line.sharedState, 'this process (no REDIS_URL)')
      }
      assert.ok(line.msg.includes(line.database!) && line.msg.includes(line.storage!) && line.msg.includes(line.sharedState!))
    } finally {
      await server.stop()
    }
  })

  test('a shared database with local files, or without Redis, is warned about at start', async (t) => {
    if (!backends.env.DATABASE_URL) return t.skip('needs PostgreSQL: the scaled combination runs it')
    // What an env file with an unquoted STORAGE_URL gives: the variable lost, so files fall back to the
    // data directory; and REDIS_URL forgotten.
    const server = await startServer({ env: { PACKS_MASTER_PASSWORD: PASSWORD, DATABASE_URL: backends.env.DATABASE_URL } })
    dirs.push(server.dataDir)
    try {
      await server.waitForStdout(RUNNING_LINE)
      const warnings = shapeWarnings(server.stdout())
      assert.equal(warnings.length, 2, warnings.join('\n'))
      assert.match(warnings[0] ?? '', /database is shared \(PostgreSQL\) but files are on this machine's disk/)
      assert.match(warnings[1] ?? '', /database is shared \(PostgreSQL\) but REDIS_URL is unset/)
    } finally {
      await server.stop()
    }
  })

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`npm start builds nothing, and ${signal} to npm drains an in-flight request and exits 0`, async () => {
      const dataDir = tempDataDir()
      dirs.push(dataDir)
      // `npm start` on a free port; again on another when the port was taken between freePort() and the
      // server's listen (other test files start servers and open connections meanwhile): "cannot listen".
      let port = 0
      let npm: ChildProcess
      let stdout = ''
      let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
      for (let attempt = 1; ; attempt++) {
        port = await freePort()
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          ...backends.env,
          PACKS_DATA_DIR: dataDir,
          PACKS_MASTER_PASSWORD: PASSWORD,
          PORT: String(port),
          HOST: '127.0.0.1',
          PACKS_PASSWORD_HASH_COST: '1024',
          // A request that takes its time: the body trickles in under the body deadline.
          PACKS_BODY_TIMEOUT: '30s',
        }
        const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
        npm = child
        stdout = ''
        child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
        child.stderr.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
        const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
          child.once('close', (code, sig) => resolve({ code, signal: sig }))
        })
        exited = ended
        // The start-up line, or npm's end (a start that failed), whichever comes first; the output either way.
        let over = false
        void ended.then(() => { over = true })
        await until(() => (RUNNING_LINE.test(stdout) || over ? true : undefined), "npm start's start-up line", 60_000)
          .catch((error: Error) => {
            child.kill('SIGKILL')
            const pid = /"pid":(\d+)/.exec(stdout)?.[1]
            if (pid) try { process.kill(Number(pid), 'SIGKILL') } catch { /* gone */ }
            throw new Error(`${error.message}; npm start's output so far:\n${stdout}`)
          })
        if (RUNNING_LINE.test(stdout)) break
        if (!/cannot listen: listen EADDRINUSE/.test(stdout) || attempt === 3) assert.fail(`npm start ended before its start-up line:\n${stdout}`)
      }
      try {
        const serverPid = Number(/"pid":(\d+)/.exec(stdout)![1])
        assert.notEqual(serverPid, npm.pid, 'the server is a process of its own')

        // A request in flight: a JSON body (the update-check batch, which needs only the gate) announced
        // and half sent; the rest comes a second later.
        const inFlight = new Promise<{ status: number; body: string; at: number }>((resolve, reject) => {
          const request = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/api/update-check/', headers: { 'content-type': 'application/json', 'content-length': '60', 'x-master-password': PASSWORD } }, (response) => {
            let body = ''
            response.on('data', (chunk: Buffer) => { body += chunk.toString() })
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body, at: Date.now() }))
          })
          request.on('error', reject)
          request.write('{"username":"nobody","password":')
          setTimeout(() => request.end('"not-the-password-at-all-x"}'), 1000)
        })
        await new Promise((resolve) => setTimeout(resolve, 200))
        const signalled = Date.now()
        npm.kill(signal)
        const answer = await inFlight
        // The request that was under way is read to its end and answered (its body is no batch: 400), not cut off.
        assert.equal(answer.status, 400, `in-flight request answered: ${answer.status} ${answer.body}`)
        assert.ok(answer.at > signalled + 500, 'answered after the signal, once its body had arrived')
        // Unref'd: once the exit wins the race, the timer must not hold the finished file open for 20 s.
        const exit = await Promise.race([exited, new Promise<null>((resolve) => { setTimeout(resolve, 20_000, null).unref() })])
        assert.ok(exit !== null, `npm start still running 20 s after ${signal}; output:\n${stdout}`)
        assert.equal(exit.code, 0, `npm start exits 0 after ${signal}; output:\n${stdout}`)
        assert.ok(Date.now() - signalled < 10_000, 'within the drain time')
        // The server process itself is gone: nothing left holding the port.
        assert.throws(() => process.kill(serverPid, 0), /ESRCH/)
        assert.match(stdout, new RegExp(`"signal":"${signal}","msg":"shutting down"`))
        await new Promise<void>((resolve, reject) => {
          const probe = http.get({ port, host: '127.0.0.1', path: '/healthz' })
          probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNREFUSED' ? resolve() : reject(error)))
          probe.once('response', () => reject(new Error('something still answers on the port')))
        })
        // npm ran the start script alone: no lifecycle script before it, no build (whose scripts print what they
        // built). Other test files may build dist/ meanwhile, so its files' times would prove nothing here.
        const scripts = [...stdout.matchAll(/^> packs@\S+ (\S+)$/gm)].map((match) => match[1])
        assert.deepEqual(scripts, ['start'], stdout)
        assert.doesNotMatch(stdout, /web bundle:|server build:/)
      } finally {
        if (npm.exitCode === null) npm.kill('SIGKILL')
        // A server that outlived npm (what this test is about) must not outlive the test.
        const pid = /"pid":(\d+)/.exec(stdout)?.[1]
        if (pid) try { process.kill(Number(pid), 'SIGKILL') } catch { /* gone, as it should be */ }
      }
    })
  }
})
