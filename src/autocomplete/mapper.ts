// Suggestions in the API's shape.
import type { Static } from 'typebox'
import type { TagSuggestionRow } from '../packs/tags-repository.js'
import type { TagSuggestion, UserSuggestion } from '../api/autocomplete.js'

export function toTagSuggestion(row: TagSuggestionRow): Static<typeof TagSuggestion> {
  return { name: row.name, category: row.category, category_name: row.categoryName, color: row.color }
}

export function toUserSuggestion(username: string): Static<typeof UserSuggestion> {
  return { username }
}
