// A username field with suggestions: a combobox (WAI-ARIA 1.2 pattern, as the
// tags field's ./tag-picker.ts) over GET /api/users/autocomplete/. By default
// it fills the one text field: the name typed stays what is sent, so a name the
// list does not offer can still be typed and the server says what is wrong
// with it. Given an `onPick`, a picked name is handed to that instead and the
// box is emptied for the next one (the create page's list of co-authors).
//   ArrowDown / ArrowUp  move through the suggestions (opening them)
//   Enter                picks the highlighted one; with none highlighted, submits the form
//   Escape               closes the list
// Without JavaScript the field is a plain text box.
import type { Static } from 'typebox'
import type { UserSuggestion } from '../../../api/autocomplete.js'
import { api } from './api.js'
import { highlightOption, listboxKeydown, type Listbox } from './listbox-keys.js'

type Suggestion = Static<typeof UserSuggestion>

const SEARCH_DELAY_MS = 150

export class UserPicker {
  private suggestions: Suggestion[] = []
  private active = -1
  private searchTimer: ReturnType<typeof setTimeout> | undefined
  private searchSeq = 0
  /** The list as the shared arrow / Enter / Escape handling sees it. */
  private readonly keys: Listbox

  constructor(
    private readonly input: HTMLInputElement,
    private readonly listbox: HTMLUListElement,
    private readonly live: HTMLElement,
    /** Names not worth offering (the owner, members, invitees), lower case; read at each search, so the caller may change it. */
    private readonly skip: ReadonlySet<string> = new Set(),
    /** Takes each picked name instead of the box (which is then emptied); the caller announces what it did with it. */
    private readonly onPick?: (username: string) => void,
  ) {
    this.keys = {
      open: () => this.open,
      active: () => this.active,
      count: () => this.suggestions.length,
      search: () => void this.search(),
      highlight: (index) => this.highlight(index),
      pick: (index) => this.pick(index),
      close: () => this.close(),
    }
    input.setAttribute('role', 'combobox')
    input.setAttribute('aria-autocomplete', 'list')
    input.setAttribute('aria-expanded', 'false')
    input.setAttribute('aria-controls', listbox.id)
    input.addEventListener('input', () => this.searchSoon())
    input.addEventListener('keydown', (event) => this.onKey(event))
    input.addEventListener('blur', () => setTimeout(() => {
      if (document.activeElement !== input) this.close()
    }, 100))
    // mousedown, not click: picking must happen before the input's blur closes the list.
    listbox.addEventListener('mousedown', (event) => {
      const option = (event.target as Element).closest<HTMLLIElement>('li[data-index]')
      if (!option) return
      event.preventDefault()
      this.pick(Number(option.dataset.index))
    })
  }

  private get open(): boolean {
    return !this.listbox.hidden
  }

  private searchSoon(): void {
    clearTimeout(this.searchTimer)
    this.searchTimer = setTimeout(() => void this.search(), SEARCH_DELAY_MS)
  }

  private async search(): Promise<void> {
    const seq = ++this.searchSeq
    const query = this.input.value.trim()
    // Nothing typed: nothing to suggest (the site's whole list of users is not offered for browsing).
    if (query === '') return this.close()
    let found: Suggestion[]
    try {
      found = await api<Suggestion[]>('GET', `/api/users/autocomplete/?q=${encodeURIComponent(query)}`)
    } catch {
      if (seq === this.searchSeq) this.render([], 'Names could not be loaded')
      return
    }
    // An answer to an older query, or the box lost focus meanwhile: not shown.
    if (seq !== this.searchSeq || document.activeElement !== this.input) return
    this.render(found.filter((s) => !this.skip.has(s.username.toLowerCase())), 'No matching users')
  }

  private render(suggestions: Suggestion[], emptyText: string): void {
    // A later answer (the user kept typing) keeps the option the user had moved to, if it is still offered.
    const kept = this.active >= 0 ? this.suggestions[this.active]?.username : undefined
    this.suggestions = suggestions
    this.active = -1
    const items = suggestions.map((s, index) => {
      const item = document.createElement('li')
      item.id = `${this.listbox.id}-${index}`
      item.setAttribute('role', 'option')
      item.setAttribute('aria-selected', 'false')
      item.dataset.index = String(index)
      item.textContent = s.username
      return item
    })
    if (items.length === 0) {
      const empty = document.createElement('li')
      empty.className = 'muted tag-options-empty'
      empty.setAttribute('role', 'option')
      empty.setAttribute('aria-disabled', 'true')
      empty.textContent = emptyText
      items.push(empty)
    }
    this.listbox.replaceChildren(...items)
    this.listbox.hidden = false
    this.input.setAttribute('aria-expanded', 'true')
    this.input.removeAttribute('aria-activedescendant')
    this.live.textContent = suggestions.length === 0 ? emptyText : `${suggestions.length} ${suggestions.length === 1 ? 'match' : 'matches'}`
    const keptIndex = kept === undefined ? -1 : suggestions.findIndex((s) => s.username === kept)
    if (keptIndex >= 0) this.highlight(keptIndex)
  }

  private close(): void {
    this.searchSeq++
    clearTimeout(this.searchTimer)
    this.listbox.hidden = true
    this.input.setAttribute('aria-expanded', 'false')
    this.input.removeAttribute('aria-activedescendant')
    this.active = -1
  }

  /** Makes option `index` the active one (aria-activedescendant), scrolled into view. */
  private highlight(index: number): void {
    this.active = index
    highlightOption(this.input, this.listbox, index, `${this.listbox.id}-${index}`)
  }

  private onKey(event: KeyboardEvent): void {
    if (listboxKeydown(event, this.keys)) return
    if (event.key === 'Enter') {
      // Nothing highlighted: Enter goes on to submit the form, as a text box's Enter does.
      this.close()
    } else if (event.key === 'Escape') {
      // The list is closed already; this stops a search still waiting for its delay, so it does not open after Escape.
      this.close()
    }
  }

  private pick(index: number): void {
    const suggestion = this.suggestions[index]
    if (!suggestion) return
    if (this.onPick) {
      this.input.value = ''
      this.close()
      this.input.focus()
      this.onPick(suggestion.username)
      return
    }
    this.input.value = suggestion.username
    this.close()
    this.live.textContent = `${suggestion.username} chosen`
    this.input.focus()
  }
}
