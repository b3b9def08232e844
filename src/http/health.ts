import { Type } from 'typebox'
import type { App } from './types.js'

export default async function healthRoutes(app: App): Promise<void> {
  // Outside the gate (docs/decisions.md#the-gate) so load balancers and probes need no password.
  app.get('/healthz', {
    config: { access: 'public' },
    schema: { hide: true, response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
  }, async () => ({ status: 'ok' as const }))
}
