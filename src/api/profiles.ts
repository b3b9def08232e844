// A user's public profile (GET /api/users/{username}/).
import { Type, type Static } from 'typebox'
import { PackSummary } from './packs.js'

export const UserProfile = Type.Object(
  {
    username: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    disabled: Type.Boolean({ description: 'Disabled by staff. Only staff see a disabled account\'s profile.' }),
    packs: Type.Array(PackSummary, { description: 'Their packs, most recently updated first; hidden ones only for their owner and staff.' }),
  },
  { title: 'UserProfile' },
)

export const UserParams = Type.Object({ username: Type.String({ description: 'Matched case-insensitively.' }) })

export type UserProfileBody = Static<typeof UserProfile>
