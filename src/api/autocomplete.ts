import { Type } from 'typebox'

/** Longer than any tag, category or user name, so a longer query could never match: refused instead of run. */
export const MAX_QUERY_LENGTH = 64

export const AutocompleteQuery = Type.Object({
  q: Type.Optional(Type.String({ maxLength: MAX_QUERY_LENGTH, description: `Partial name, case-insensitive; at most ${MAX_QUERY_LENGTH} characters.` })),
})

export const TagSuggestion = Type.Object(
  {
    name: Type.String(),
    category: Type.String({ description: 'The category key.' }),
    category_name: Type.String({ description: 'The category display name.' }),
    color: Type.String({ description: 'The category color, #rrggbb.' }),
  },
  { title: 'TagSuggestion' },
)

export const UserSuggestion = Type.Object({ username: Type.String() }, { title: 'UserSuggestion' })
