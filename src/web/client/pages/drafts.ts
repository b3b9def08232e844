// My drafts: delete a draft (after a confirmation) without leaving the page.
import { ApiError, api, byId } from '../lib/api.js'
import { draftCopyKey } from '../lib/autosave.js'

const list = byId<HTMLUListElement>('draft-list')
const status = byId('drafts-status')
const empty = byId('drafts-empty')

// Saved times in the viewer's own clock (the server renders them in UTC).
for (const time of list.querySelectorAll<HTMLTimeElement>('time[datetime]')) {
  const date = new Date(time.dateTime)
  if (!Number.isNaN(date.getTime())) {
    time.textContent = date.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' })
  }
}

list.addEventListener('click', (event) => {
  const button = (event.target as Element).closest<HTMLButtonElement>('button.delete-draft')
  const item = button?.closest<HTMLLIElement>('li[data-draft]')
  if (button && item) void deleteDraft(item, button)
})

async function deleteDraft(item: HTMLLIElement, button: HTMLButtonElement): Promise<void> {
  const title = item.querySelector('.draft-title')?.textContent?.trim() || 'Untitled draft'
  if (!window.confirm(`Delete the draft "${title}" and its uploaded files? This cannot be undone.`)) return
  const draft = item.dataset.draft!
  button.disabled = true
  status.classList.remove('error')
  try {
    await api('DELETE', `/api/draft/?draft=${encodeURIComponent(draft)}`)
  } catch (error) {
    // Already gone (deleted in another tab, published) is what was wanted.
    if (!(error instanceof ApiError && error.status === 404)) {
      button.disabled = false
      status.classList.add('error')
      status.textContent = `Could not delete "${title}": ${error instanceof ApiError ? error.detail : String(error)}`
      return
    }
  }
  try {
    localStorage.removeItem(draftCopyKey(draft))
  } catch {
    // Storage disabled: nothing was kept there either.
  }
  // Keyboard users keep their place: focus moves to the next draft's Delete button, or the list's heading.
  const next = (item.nextElementSibling ?? item.previousElementSibling)?.querySelector<HTMLButtonElement>('button.delete-draft')
  item.remove()
  status.textContent = `Deleted "${title}".`
  if (!list.querySelector('li[data-draft]')) empty.hidden = false
  if (next) next.focus()
  else byId('main').focus()
}
