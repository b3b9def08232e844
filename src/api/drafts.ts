import { Type, type Static } from 'typebox'
import { TempUpload } from './uploads.js'

const DraftId = Type.String({ format: 'uuid', description: 'The draft, a UUID chosen by the create page.' })

/**
 * Free-form on purpose: the draft is stored and returned exactly as sent.
 * additionalProperties: true also keeps the response serialiser from dropping
 * members it was not told about. The known fields are only described, not
 * declared: declared properties would be type-coerced by the validator
 * (5 -> "5"), and the draft must come back as saved.
 */
export const DraftFormData = Type.Object({}, {
  additionalProperties: true,
  title: 'DraftFormData',
  description: 'The create-page form, stored as given. Known fields: title, summary, category (a category key), description, '
    + 'tags (array of tag names), version_name, changelog; when present, each must be a string or null, and tags an array of strings '
    + 'or null; team (co-authors invited when the draft is published: an array of {username, role} with role maintainer or uploader, '
    + 'at most 20). Other members are kept as they are; the create page adds revision (a number: which of its edits the saved data '
    + 'holds, so a reopened page can tell whether a copy it kept locally is newer).',
})

export const DraftQuery = Type.Object({ draft: DraftId })

export const DraftData = Type.Object(
  {
    data: DraftFormData,
    uploads: Type.Array(TempUpload, { description: "The caller's pending uploads of this draft, oldest first." }),
  },
  { title: 'DraftData' },
)

export const DraftSaveBody = Type.Object({ draft: DraftId, data: DraftFormData })

export const DraftSaved = Type.Object(
  { saved: Type.Boolean(), updated_at: Type.String({ format: 'date-time' }) },
  { title: 'DraftSaved' },
)

export const PublishBody = Type.Object({ draft: DraftId })

export type DraftFormDataBody = Static<typeof DraftFormData>

export const DraftListItem = Type.Object(
  {
    draft: DraftId,
    title: Type.Union([Type.String(), Type.Null()], { description: 'The saved title, trimmed; null while the draft has none.' }),
    updated_at: Type.String({ format: 'date-time', description: 'When the draft was last saved.' }),
    uploads: Type.Integer({ minimum: 0, description: 'How many pending uploads the draft has.' }),
  },
  { title: 'DraftListItem' },
)

export const DraftList = Type.Array(DraftListItem, { description: "The caller's drafts, most recently saved first." })
