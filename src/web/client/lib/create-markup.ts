// DOM for the create page's pieces that appear after load: tag chips,
// uploads and the co-authors to invite. The server renders the same markup
// for the saved ones (src/pages/create.ts); text goes in through textContent only.
import type { TempUploadBody } from '../../../api/uploads.js'

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag)
  if (className) node.className = className
  if (text !== undefined) node.textContent = text
  return node
}

/** Category keys are [a-z0-9_-] (the CLI checks); anything else gets no color class rather than a broken one. */
function categoryClass(category: string | null): string {
  return category && /^[a-z0-9_-]+$/.test(category) ? ` cat-${category}` : ''
}

export function tagChip(name: string, category: string | null): HTMLLIElement {
  const item = element('li')
  item.dataset.tag = name
  if (category) item.dataset.category = category
  const chip = element('span', `chip${categoryClass(category)}`, name)
  const remove = element('button', 'chip-remove', '×')
  remove.type = 'button'
  remove.setAttribute('aria-label', `Remove ${name}`)
  chip.append(remove)
  item.append(chip)
  return item
}

/** The roles a co-author can be invited with, in the order offered: the one granting less first (the default). */
export const TEAM_ROLES = ['uploader', 'maintainer'] as const
export type TeamRole = (typeof TEAM_ROLES)[number]

/** A co-author to invite: the name, a role choice (labelled "Role of <name>") and a Remove button. */
export function teamPerson(username: string, role: TeamRole): HTMLLIElement {
  const item = element('li', 'team-person')
  item.dataset.username = username
  const label = element('label', 'team-role')
  const select = element('select')
  for (const value of TEAM_ROLES) {
    const option = element('option', undefined, value === 'uploader' ? 'Uploader' : 'Maintainer')
    option.value = value
    option.selected = value === role
    select.append(option)
  }
  label.append(element('span', 'visually-hidden', `Role of ${username}`), select)
  const remove = element('button', 'secondary team-remove', 'Remove')
  remove.type = 'button'
  remove.append(element('span', 'visually-hidden', ` ${username}`))
  item.append(element('span', 'member-name', username), label, remove)
  return item
}

export function uploadItem(upload: TempUploadBody): HTMLLIElement {
  const item = element('li', 'upload')
  item.dataset.upload = upload.uuid
  item.dataset.kind = upload.kind
  let preview: HTMLElement
  if (upload.content_type.startsWith('image/')) {
    const img = element('img', 'upload-preview')
    img.src = upload.url
    img.alt = `Preview of ${upload.filename}`
    preview = img
  } else if (upload.content_type.startsWith('video/')) {
    const video = element('video', 'upload-preview')
    video.src = upload.url
    video.controls = true
    video.muted = true
    video.preload = 'metadata'
    video.setAttribute('aria-label', `Preview of ${upload.filename}`)
    preview = video
  } else {
    preview = element('span', 'upload-preview file-badge', 'ZIP')
    preview.setAttribute('aria-hidden', 'true')
  }
  const remove = element('button', 'danger delete-upload', 'Delete')
  remove.type = 'button'
  remove.append(element('span', 'visually-hidden', ` ${upload.filename}`))
  item.append(preview, element('span', 'upload-name', upload.filename), remove)
  return item
}

let pendingCount = 0

/** An upload on its way: the file's name and a progress bar (value 0..1) with the percentage beside it. */
export function pendingUploadItem(filename: string): { item: HTMLLIElement; progress: (fraction: number) => void } {
  const item = element('li', 'upload pending')
  const nameId = `pending-upload-${++pendingCount}`
  const name = element('span', 'upload-name', filename)
  name.id = nameId
  const bar = element('progress')
  bar.max = 1
  bar.value = 0
  bar.setAttribute('aria-labelledby', nameId)
  const percent = element('span', 'upload-percent', '0 %')
  item.append(name, bar, percent)
  return {
    item,
    progress(fraction) {
      bar.value = fraction
      percent.textContent = `${Math.round(fraction * 100)} %`
    },
  }
}
