// Schemas shared by several resources. Each route's schema validates its
// input, serialises its output and is what /api/schema/ publishes.
import { Type, type TSchema } from 'typebox'

export const ErrorBody = Type.Object(
  { detail: Type.String({ description: 'What went wrong, for a person to read.' }) },
  { $id: 'Error', title: 'Error' },
)

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

/** Token-authenticated operations (SPEC: uploads, drafts, stats). */
export const bearerAuth = [{ bearerAuth: [] }]

/** A UUID path parameter: its schema is a plain string, so a malformed one reaches the handler and becomes 404 (CONTRACT §4). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value)
}
