// Who the caller is (GET /api/me/).
import { Type, type Static } from 'typebox'

export const Me = Type.Object({ username: Type.String(), is_staff: Type.Boolean(), csrf_token: Type.Union([Type.String(), Type.Null()]) })

export type MeBody = Static<typeof Me>
