// How a real server process stops on SIGTERM (src/server.ts): requests in flight finish, then it exits 0
// well within its grace, even when a keep-alive connection was busy at the moment the signal came.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { startServer } from '../helpers/server.js'
import { until } from '../helpers/wait.js'

test('SIGTERM while a keep-alive request is in flight: the request is answered and the server exits 0', async () => {
  const server = await startServer()
  const socket = net.connect(server.port, '127.0.0.1')
  try {
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject))
    let answer = ''
    socket.setEncoding('utf8').on('data', (chunk: string) => { answer += chunk })
    socket.on('error', () => {})
    // A request whose body has not arrived yet when the signal comes: its answer goes out after close() began,
    // on a connection the client keeps open (the way browsers and HTTP clients keep theirs). With
    // `Expect: 100-continue` the server says when it has read the head (RFC 9110 §10.1.1), so the signal comes
    // only once the request is certainly in flight: one still unread in the socket's buffer is, to the server,
    // an idle connection, which a shutdown closes as it should.
    socket.write(
      `POST /gate/ HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n` +
      'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 10\r\n\r\n',
    )
    await until(() => /^HTTP\/1\.1 100 /.test(answer) || undefined, 'the server to read the request head (100 Continue)')
    const exit = server.stop(30_000)
    await until(() => /"msg":"shutting down"/.test(server.stdout()) || undefined, 'the server to begin shutting down')
    socket.write('password=x')
    await until(() => /\r\n\r\nHTTP\/1\.1 \d{3} /.test(answer) || undefined, 'the answer to the request in flight')
    // Without the reaping in src/server.ts the now idle connection held close() until the grace ran out
    // (exit code 1, nothing on stderr).
    assert.deepEqual(await exit, { code: 0, signal: null }, `a clean exit; stderr:\n${server.stderr()}`)
  } finally {
    socket.destroy()
    await server.exited
  }
})
