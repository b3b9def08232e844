// GET /api/me/: who the credentials belong to, so scripts and pages can learn
// who they are. Sign-in, sign-out and the gate are forms: src/pages/.
import { Me } from '../api/accounts.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import type { App } from '../http/types.js'
import { toMe } from './mapper.js'

export default async function meRoutes(app: App): Promise<void> {
  app.get('/api/me/', {
    config: { access: 'user' },
    schema: {
      summary: 'The authenticated user',
      description: 'Who the credentials belong to; for a browser session also the CSRF token to send as X-CSRF-Token.',
      tags: ['auth'],
      security: bearerAuth,
      response: { 200: Me, ...errorResponses(401) },
    },
  }, async (request) => toMe(request.user!, request.csrfToken))
}
