// Profiles: GET /api/users/{username}/. The page
// /users/{username}/ (src/pages/profile.ts) shows the same; staff disable and
// enable accounts with POST /api/users/{username}/disable|enable/
// (src/moderation/account-routes.ts).
import { PACKS_PER_PAGE } from '../api/constants.js'
import { errorResponses } from '../api/common.js'
import { UserParams, UserProfile, UserProfileQuery } from '../api/profiles.js'
import type { App } from '../http/types.js'
import { fileUrls } from '../http/urls.js'
import { toUserProfile } from './mapper.js'
import { getProfile } from './service.js'

export default async function profileRoutes(app: App): Promise<void> {
  app.get('/api/users/:username/', {
    config: { access: 'gate', heavy: true },
    schema: {
      summary: 'A user\'s profile',
      description: 'The user (username matched case-insensitively) and their packs, most recently updated first, '
        + 'paginated like the listing (page, per_page; a page past the last has no packs). Everyone past the gate sees '
        + 'the public packs; the user themself and staff also see hidden ones (hidden: true). A disabled account\'s '
        + 'profile is 404 except to staff (disabled: true). An unknown user is 404.',
      tags: ['users'],
      params: UserParams,
      querystring: UserProfileQuery,
      response: { 200: UserProfile, ...errorResponses(400, 401, 404) },
    },
  }, async (request) => {
    const page = request.query.page ?? 1
    const perPage = request.query.per_page ?? PACKS_PER_PAGE
    const profile = await getProfile(app.db, request.params.username, request.user, page, perPage)
    return toUserProfile(profile.account, profile.packs, fileUrls(app.config, request), { page, perPage, total: profile.total })
  })
}
