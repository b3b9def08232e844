// Staff disable and enable accounts: POST /api/users/{username}/disable/ and
// /enable/ (src/moderation/account-service.ts). The answer
// is the account's profile as staff see it, its hidden packs included.
import type { FastifyRequest } from 'fastify'
import { PACKS_PER_PAGE } from '../api/constants.js'
import type { App } from '../http/types.js'
import { bearerAuth, errorResponses } from '../api/common.js'
import { ModerationBody } from '../api/packs.js'
import { UserParams, UserProfile, type UserProfileBody } from '../api/profiles.js'
import { fileUrls } from '../http/urls.js'
import { toUserProfile } from '../profiles/mapper.js'
import { noBodyIsEmpty } from './pack-routes.js'
import { listPackPage } from '../packs/service.js'
import { setUserDisabled, type AccountState } from './account-service.js'

export default async function accountModerationRoutes(app: App): Promise<void> {
  for (const disabled of [true, false]) {
    app.post(`/api/users/:username/${disabled ? 'disable' : 'enable'}/`, {
      config: { access: 'staff' },
      preValidation: noBodyIsEmpty,
      schema: {
        summary: disabled ? 'Disable an account (staff only)' : 'Enable a disabled account (staff only)',
        description: disabled
          ? 'Stops an account at once, on every instance: it cannot sign in, its sessions end, its API tokens answer 401 '
            + '(kept, so enabling restores them), and its packs are hidden from everyone but staff (the update-check '
            + 'answers 404 for them). Reversible with /enable/. Staff cannot disable their own account (400). '
            + 'The optional reason goes into the audit log. Disabling a disabled account changes nothing.'
          : 'Lets the account sign in again; its API tokens work again and its packs are visible again (those staff '
            + 'hid one by one stay hidden). The optional reason goes into the audit log.',
        tags: ['moderation'],
        security: bearerAuth,
        params: UserParams,
        body: ModerationBody,
        response: { 200: UserProfile, ...errorResponses(400, 401, 403, 404) },
      },
    }, async (request) => {
      const account = await setUserDisabled(app, request.user!, request.params.username, disabled, request.body?.reason)
      return staffProfile(app, request, account)
    })
  }
}

/**
 * The account's profile as staff see it: the first page of its packs, hidden
 * or not, as GET /api/users/{username}/ answers staff (which has the other pages).
 */
async function staffProfile(app: App, request: FastifyRequest, account: AccountState): Promise<UserProfileBody> {
  const { items, total } = await listPackPage(app.db, { ownerId: account.id, includeHidden: true }, 1, PACKS_PER_PAGE)
  return toUserProfile(account, items, fileUrls(app.config, request), { page: 1, perPage: PACKS_PER_PAGE, total })
}
