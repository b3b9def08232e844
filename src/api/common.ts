// Schemas shared by several resources. Each route's schema validates its
// input, serialises its output and is what /api/schema/ publishes.
import { Type, type TLiteral, type TSchema } from 'typebox'

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request: invalid input.',
  401: 'Missing or invalid credentials (gate password, token or session). Carries WWW-Authenticate.',
  403: 'Forbidden.',
  404: 'Not found.',
  409: 'Conflict with existing data.',
  413: 'Payload too large.',
  429: 'Too many failed attempts; see Retry-After.',
}

/** Response schemas for the given error statuses, each `{ detail }`, for validation-free serialisation and the docs. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(
    statuses.map((status) => [status, Type.Object({ detail: Type.String() }, { description: ERROR_DESCRIPTIONS[status] ?? 'Error.' })]),
  )
}

export const Success = Type.Object({ success: Type.Boolean() })

/** A 204's (absent) body. */
export const NoContent = Type.Null({ description: 'Done; no body.' })

/** Operations that need a user declare token authentication (docs/decisions.md#authentication). */
export const bearerAuth = [{ bearerAuth: [] }]

/** One literal schema per string of a list, typed as the tuple they are (a plain array of them would type as nothing). */
export type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> }
