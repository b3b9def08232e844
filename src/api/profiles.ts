// A user's public profile (GET /api/users/{username}/).
import { Type, type Static } from 'typebox'
import { MAX_PACKS_PER_PAGE, PACKS_PER_PAGE } from './constants.js'
import { MAX_PAGE, PackSummary } from './packs.js'

export const UserProfile = Type.Object(
  {
    username: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    disabled: Type.Boolean({ description: 'Disabled by staff. Only staff see a disabled account\'s profile.' }),
    packs: Type.Array(PackSummary, { description: 'Their packs, most recently updated first; hidden ones only for their owner and staff (marked hidden).' }),
    page: Type.Optional(Type.Integer({ description: 'Which page of their packs `packs` is (GET /api/users/{username}/ pages them like the listing).' })),
    per_page: Type.Optional(Type.Integer()),
    total: Type.Optional(Type.Integer({ description: 'Their packs this caller sees, on all pages.' })),
  },
  { title: 'UserProfile' },
)

export const UserParams = Type.Object({ username: Type.String({ description: 'Matched case-insensitively.' }) })

export const UserProfileQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: 'Page of their packs.' })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PACKS_PER_PAGE, default: PACKS_PER_PAGE })),
})

export type UserProfileBody = Static<typeof UserProfile>
