// Autocomplete for the create page's tag field and user search (docs/decisions.md#autocomplete).
import { Type } from 'typebox'
import type { App } from '../http/types.js'
import { errorResponses } from '../api/common.js'
import { MAX_SUGGESTIONS } from '../api/constants.js'
import { AutocompleteQuery, TagSuggestion, UserSuggestion } from '../api/autocomplete.js'
import { toTagSuggestion, toUserSuggestion } from './mapper.js'
import { tagSuggestions, userSuggestions } from './service.js'

export default async function autocompleteRoutes(app: App): Promise<void> {
  app.get('/api/tags/autocomplete/', {
    config: { access: 'gate', heavy: true },
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
    const rows = await tagSuggestions(app.db, request.query.q)
    return rows.map(toTagSuggestion)
  })

  app.get('/api/users/autocomplete/', {
    config: { access: 'gate', heavy: true },
    schema: {
      summary: 'User autocomplete',
      description: `Users whose name starts with \`q\`, case-insensitively, in name order. At most ${MAX_SUGGESTIONS}.`,
      tags: ['autocomplete'],
      querystring: AutocompleteQuery,
      response: { 200: Type.Array(UserSuggestion), ...errorResponses(400, 401) },
    },
  }, async (request) => {
    const names = await userSuggestions(app.db, request.query.q)
    return names.map(toUserSuggestion)
  })
}
