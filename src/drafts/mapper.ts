// Drafts in the API's shape.
import type { Static } from 'typebox'
import type { Config } from '../config/index.js'
import type { DraftData, DraftFormDataBody, DraftListItem, DraftSaved } from '../api/drafts.js'
import { toTempUpload } from '../uploads/mapper.js'
import type { DraftSummary, LoadedDraft } from './service.js'

export function toDraftData(config: Config, draft: LoadedDraft): Static<typeof DraftData> {
  return { data: draft.data as DraftFormDataBody, uploads: draft.uploads.map((u) => toTempUpload(config, u)) }
}

export function toDraftSaved(updatedAt: string): Static<typeof DraftSaved> {
  return { saved: true, updated_at: updatedAt }
}

export function toDraftListItem(draft: DraftSummary): Static<typeof DraftListItem> {
  return { draft: draft.id, title: draft.title, updated_at: draft.updatedAt, uploads: draft.uploads }
}
