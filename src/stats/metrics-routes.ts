// GET /metrics: the figures of ./prometheus.ts for a Prometheus scraper.
//
// Not behind the gate: every player's mod holds the gate password, and what
// the figures tell (which routes are slow, how full the queues are, when the
// database stopped answering) is the operator's. Not for staff sessions or
// API tokens either: a scraper would then hold an account's powers, and its
// scrapes would stop the day that account is disabled. It answers only the
// scrape token of PACKS_METRICS_TOKEN, as `Authorization: Bearer <token>`
// (how Prometheus' `authorization` setting sends it), compared in constant
// time (both hashed first, so not even its length shows); with the variable unset, /metrics is off (404), so a site that never
// asked for metrics shows none. A token has at least 32 characters (its
// setting refuses fewer), beyond guessing, so wrong ones are not counted
// against the client as wrong passwords are.
import { Type } from 'typebox'
import { errorResponses } from '../api/common.js'
import { safeEqual } from '../auth/secrets.js'
import { NotFound, ServiceUnavailable, Unauthorized } from '../errors.js'
import type { App } from '../http/types.js'

/** The header's token: the scheme is case-insensitive (RFC 9110 §11.1), the token one word. */
const BEARER = /^bearer +([^\s]+) *$/i

/** The token of `Authorization: Bearer <token>`, or undefined for any other header or none. */
export function scrapeTokenOf(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1]
}

export default async function metricsRoutes(app: App): Promise<void> {
  const token = app.config.metricsToken
  app.get('/metrics', {
    config: { access: 'public' },
    schema: {
      hide: true,
      response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4.' }), ...errorResponses(401, 404, 503) },
    },
  }, async (request, reply) => {
    const exporter = app.prometheus
    if (token === null || exporter === null) {
      throw new NotFound('metrics are off on this site: set PACKS_METRICS_TOKEN to turn them on (docs/deploy.md#10-metrics-and-readiness)')
    }
    const sent = scrapeTokenOf(request.headers.authorization)
    if (sent === undefined) throw new Unauthorized('send the scrape token: Authorization: Bearer <PACKS_METRICS_TOKEN>')
    if (!safeEqual(sent, token)) throw new Unauthorized('wrong scrape token: it must be the value of PACKS_METRICS_TOKEN')
    let text: string
    try {
      text = await exporter.metrics()
    } catch (error) {
      // With several workers: the primary, or a worker it asked, did not answer in time.
      throw new ServiceUnavailable('the metrics could not be gathered, try again', { cause: error })
    }
    return reply.type(exporter.contentType).send(text)
  })
}
