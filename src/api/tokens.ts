// API tokens of the signed-in user (Settings → API tokens, and its JSON API).
import { Type, type Static } from 'typebox'
import { TOKEN_MAX_DAYS, TOKEN_MAX_PACKS, TOKEN_NAME_MAX } from './constants.js'

const SCOPE_DESCRIPTION = 'The token\'s reach. full: everything its owner may do (every token made before reaches existed). '
  + 'read: reading only (GET, HEAD, OPTIONS). publish: reading, and new versions of the packs listed in `packs` '
  + '(POST /api/packs/{namespace}/{pack_id}/versions/) and nothing else: no uploads, drafts, new packs or other changes. '
  + 'A request beyond the reach gets 403 with a detail naming what the token may do.'

const Scope = Type.Union([Type.Literal('full'), Type.Literal('read'), Type.Literal('publish')], { description: SCOPE_DESCRIPTION })

export const ApiToken = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String({ description: 'The label the owner gave the token.' }),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the token last authenticated a request (recorded at most once a minute); null if never.',
    }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null: never expires.' }),
    expired: Type.Boolean({ description: 'Past expires_at: the token no longer works, and stays listed until revoked.' }),
    scope: Scope,
    packs: Type.Array(Type.String(), {
      description: 'scope publish: the packs (namespace:pack_id, current names) it may publish versions of; otherwise empty. '
        + 'A pack deleted since is no longer listed; a publish token whose packs are all deleted stays, and may only read.',
    }),
  },
  { title: 'ApiToken', description: 'An API token as its owner sees it. The token itself is shown only once, when it is created; only its hash is stored.' },
)

export const ApiTokenList = Type.Array(ApiToken, { description: 'Tokens that are not revoked, newest first; expired ones included (expired: true).' })

export const CreateTokenBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: TOKEN_NAME_MAX, description: `A label, 1-${TOKEN_NAME_MAX} characters after trimming.` }),
    // `nullable` rather than a union with null: with the validator's type
    // coercion, a union would quietly turn 0 or "" into null (never expires).
    expires_in_days: Type.Optional(Type.Unsafe<number | null>({
      type: 'integer',
      nullable: true,
      minimum: 1,
      maximum: TOKEN_MAX_DAYS,
      description: `Lifetime in whole days from now (1-${TOKEN_MAX_DAYS}); omitted or null: the token never expires.`,
    })),
    scope: Type.Optional(Type.Union([Type.Literal('full'), Type.Literal('read'), Type.Literal('publish')], {
      default: 'full', description: `What the token may do; full when omitted. ${SCOPE_DESCRIPTION}`,
    })),
    packs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      maxItems: TOKEN_MAX_PACKS,
      description: `Only with scope publish, and then at least one (at most ${TOKEN_MAX_PACKS}): packs you own, as namespace:pack_id, `
        + 'or pack_id alone for one in your namespace, in any case. Unknown packs and other people\'s are refused (400, naming them), '
        + 'staff\'s tokens included; packs with another scope: 400.',
    })),
  },
  { additionalProperties: false },
)

export const CreatedToken = Type.Object(
  {
    ...ApiToken.properties,
    token: Type.String({ description: 'The secret. Shown only in this response; store it now.' }),
    authorization: Type.String({ description: 'The complete header value: "Bearer <username> <token>".' }),
  },
  { title: 'CreatedApiToken' },
)

export const TokenParams = Type.Object({ token_id: Type.String({ description: 'The token\'s id (a UUID).' }) })

export type ApiTokenBody = Static<typeof ApiToken>
export type CreatedTokenBody = Static<typeof CreatedToken>
