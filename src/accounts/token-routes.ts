// The signed-in user's API tokens: list, create (shown once), revoke. The
// settings page (src/pages/tokens.ts) calls these from its script.
import { Success, bearerAuth, errorResponses } from '../api/common.js'
import { ApiTokenList, CreateTokenBody, CreatedToken, TokenParams } from '../api/tokens.js'
import { Forbidden } from '../errors.js'
import type { App } from '../http/types.js'
import { toApiToken, toCreatedToken } from './mapper.js'
import { issueApiToken, listApiTokens, revokeApiToken } from './tokens-service.js'

export default async function tokenRoutes(app: App): Promise<void> {
  app.get('/api/tokens/', {
    config: { access: 'user' },
    schema: {
      summary: 'List my API tokens',
      description: 'The caller\'s tokens that are not revoked, newest first, each with its reach (`scope`, and for publish tokens '
        + 'the `packs` by their current names). Expired tokens stay listed, with `expired: true`, '
        + 'until they are revoked, so their owner can see why a script stopped working. The secret itself is never listed.',
      tags: ['tokens'],
      security: bearerAuth,
      response: { 200: ApiTokenList, ...errorResponses(401) },
    },
  }, async (request) => (await listApiTokens(app.db, request.user!.id)).map(toApiToken))

  app.post('/api/tokens/', {
    config: { access: 'user' },
    schema: {
      summary: 'Create an API token',
      description: 'Needs a signed-in browser session (with its X-CSRF-Token); a request authenticated by a token gets 403. '
        + 'The token\'s reach: `scope` full (the default), read (reading only), or publish with `packs`: new versions of those '
        + 'packs, which must be the caller\'s own (the CI case: a build job that can release one pack and do nothing else). '
        + '400 for unknown packs or someone else\'s (named), a publish token without packs, or packs with another scope. '
        + 'The answer carries the token and the complete `Authorization` header value; this is the only time the token is shown.',
      tags: ['tokens'],
      security: bearerAuth,
      body: CreateTokenBody,
      response: { 201: CreatedToken, ...errorResponses(400, 401, 403, 409) },
    },
  }, async (request, reply) => {
    // A token must not mint tokens: whoever holds a leaked token could otherwise
    // make fresh ones that outlive its revocation. New credentials come only
    // from someone who signed in with the password.
    if (request.authMethod !== 'session') {
      throw new Forbidden('API tokens can only be created from a signed-in browser session (Settings → API tokens), not with a token')
    }
    const user = request.user!
    const { name, expires_in_days: days, scope, packs } = request.body
    const { token, record } = await issueApiToken(app.db, user, name, days ?? null, { scope, packs })
    return reply.code(201).send(toCreatedToken(record, token, user))
  })

  app.delete('/api/tokens/:token_id/', {
    config: { access: 'user' },
    schema: {
      summary: 'Revoke an API token',
      description: 'The token stops working at once. Someone else\'s token, an unknown or already revoked one, or a malformed id: 404.',
      tags: ['tokens'],
      security: bearerAuth,
      params: TokenParams,
      response: { 200: Success, ...errorResponses(401, 403, 404) },
    },
  }, async (request) => {
    await revokeApiToken(app.db, request.user!.id, request.params.token_id)
    return { success: true }
  })
}
