import { Type } from 'typebox'
import { suggestTags } from '../packs/tags-repository.js'
import { searchUsernames } from '../accounts/users-repository.js'
import type { App } from '../http/types.js'
import { errorResponses } from '../api/common.js'
import { AutocompleteQuery, MAX_SUGGESTIONS, TagSuggestion, UserSuggestion, toTagSuggestion } from '../api/autocomplete.js'

export default async function autocompleteRoutes(app: App): Promise<void> {
  app.get('/api/tags/autocomplete/', {
    config: { access: 'gate' },
    schema: {
      summary: 'Tag autocomplete',
      description:
        `Tags whose name or whose category's name contains \`q\`, case-insensitively: tag-name prefix matches first, ` +
        `then category-name prefix matches, then other matches; the most used first within each. At most ${MAX_SUGGESTIONS}. ` +
        'Without `q` (or with a blank one): the most used tags. `%` and `_` are plain characters.',
      tags: ['autocomplete'],
      querystring: AutocompleteQuery,
      response: { 200: Type.Array(TagSuggestion), ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const rows = await suggestTags(app.db, (request.query.q ?? '').trim(), MAX_SUGGESTIONS)
    return rows.map(toTagSuggestion)
  })

  app.get('/api/users/autocomplete/', {
    config: { access: 'gate' },
    schema: {
      summary: 'User autocomplete',
      description: `Users whose name starts with \`q\`, case-insensitively, in name order. At most ${MAX_SUGGESTIONS}.`,
      tags: ['autocomplete'],
      querystring: AutocompleteQuery,
      response: { 200: Type.Array(UserSuggestion), ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const names = await searchUsernames(app.db, (request.query.q ?? '').trim(), MAX_SUGGESTIONS)
    return names.map((username) => ({ username }))
  })
}
