// Profiles in the API's shape (UserProfile, src/api/profiles.ts). The
// moderation routes answer a disable / enable with it too.
import type { UserProfileBody } from '../api/profiles.js'
import { toPackSummary } from '../packs/mapper.js'
import type { FileUrls } from '../http/urls.js'
import type { PackSummaryRecord } from '../packs/service.js'

/** The account's side of a profile: any record with these fields (a profile's, or moderation's AccountState). */
export interface ProfileAccountFields {
  username: string
  createdAt: string
  disabledAt: string | null
}

/** Which page of the packs `packs` is; absent when the caller shows only a first page. */
export interface ProfilePaging {
  page: number
  perPage: number
  total: number
}

export function toUserProfile(account: ProfileAccountFields, packs: readonly PackSummaryRecord[], urls: FileUrls, paging?: ProfilePaging): UserProfileBody {
  return {
    username: account.username,
    created_at: account.createdAt,
    disabled: account.disabledAt !== null,
    packs: packs.map((p) => toPackSummary(p, urls)),
    ...(paging ? { page: paging.page, per_page: paging.perPage, total: paging.total } : {}),
  }
}
