// Autocomplete (docs/decisions.md#autocomplete): tags by their name or their category's name,
// users by a username prefix; at most MAX_SUGGESTIONS each.
import { MAX_SUGGESTIONS } from '../api/constants.js'
import type { Db } from '../db/index.js'
import { searchUsernames } from '../accounts/users-repository.js'
import { suggestTags, type TagSuggestionRow } from '../packs/tags-repository.js'

/** Tags matching `query` (blank: the most used tags), best matches first. */
export async function tagSuggestions(db: Db, query: string | undefined): Promise<TagSuggestionRow[]> {
  return suggestTags(db, (query ?? '').trim(), MAX_SUGGESTIONS)
}

/** Usernames starting with `query`, case-insensitively, in name order. */
export async function userSuggestions(db: Db, query: string | undefined): Promise<string[]> {
  return searchUsernames(db, (query ?? '').trim(), MAX_SUGGESTIONS)
}
