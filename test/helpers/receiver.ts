// A webhook receiver on loopback for the tests (sites allow it with PACKS_WEBHOOK_ALLOW_HOSTS=127.0.0.1 and
// PACKS_WEBHOOK_ALLOW_HTTP=on): a real node:http server that records every request whole and answers as the
// test says, in turn: fail, answer slowly, never answer, then recover.
import { once } from 'node:events'
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface ReceivedRequest {
  at: number
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

/** How to answer the next request: a status and body, after `delayMs`; 'hang' never answers. */
export type Answer = { status: number; body?: string; delayMs?: number } | 'hang'

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = []
  /** Answers for the coming requests, in order; once used up, `otherwise`. */
  readonly script: Answer[] = []
  otherwise: Answer = { status: 200, body: 'thanks' }
  private readonly server: http.Server
  private readonly hanging = new Set<http.ServerResponse>()

  private constructor() {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (chunk: Buffer) => chunks.push(chunk))
      req.on('end', () => {
        this.requests.push({ at: Date.now(), method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') })
        const answer = this.script.shift() ?? this.otherwise
        if (answer === 'hang') {
          this.hanging.add(res)
          return
        }
        const send = () => res.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body ?? '')
        if (answer.delayMs) setTimeout(send, answer.delayMs)
        else send()
      })
    })
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver()
    receiver.server.listen(0, '127.0.0.1')
    await once(receiver.server, 'listening')
    return receiver
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`
  }

  /** The requests carrying this webhook-id (every try of one delivery). */
  tries(messageId: string): ReceivedRequest[] {
    return this.requests.filter((r) => r.headers['webhook-id'] === messageId)
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy()
    this.server.closeAllConnections()
    this.server.close()
    await once(this.server, 'close').catch(() => {})
  }
}

/** The settings that let a site's webhooks reach a receiver on 127.0.0.1. */
export const LOOPBACK_WEBHOOKS = { PACKS_WEBHOOK_ALLOW_HTTP: 'on', PACKS_WEBHOOK_ALLOW_HOSTS: '127.0.0.1' }
