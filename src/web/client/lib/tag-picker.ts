// The tags field: a combobox (WAI-ARIA 1.2 pattern) over GET
// /api/tags/autocomplete/ and the chosen tags as colored chips. Only tags the
// site has can be chosen (publishing ignores other names).
//   ArrowDown / ArrowUp  move through the suggestions (opening them)
//   Enter                picks the highlighted one (or the exact match)
//   Escape               closes the list
//   Backspace            in the empty box removes the last tag
import type { Static } from 'typebox'
import type { TagSuggestion } from '../../../api/autocomplete.js'
import { api } from './api.js'
import { tagChip } from './create-markup.js'
import { highlightOption, listboxKeydown, type Listbox } from './listbox-keys.js'

type Suggestion = Static<typeof TagSuggestion>

const SEARCH_DELAY_MS = 150

export class TagPicker {
  private suggestions: Suggestion[] = []
  private active = -1
  private searchTimer: ReturnType<typeof setTimeout> | undefined
  private searchSeq = 0
  /** Focus given back after removing a chip does not open the suggestions. */
  private quietFocus = false
  /** The list as the shared arrow / Enter / Escape handling sees it. */
  private readonly keys: Listbox

  constructor(
    private readonly input: HTMLInputElement,
    private readonly listbox: HTMLUListElement,
    private readonly chips: HTMLUListElement,
    private readonly live: HTMLElement,
    private readonly onChange: () => void,
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
    input.addEventListener('input', () => this.searchSoon())
    input.addEventListener('focus', () => {
      if (this.quietFocus) this.quietFocus = false
      else this.searchSoon()
    })
    input.addEventListener('keydown', (event) => this.onKey(event))
    // Closed when focus has really left the box (not when it comes straight back, as after removing a chip).
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
    chips.addEventListener('click', (event) => {
      const button = (event.target as Element).closest('button.chip-remove')
      const item = button?.closest<HTMLLIElement>('li[data-tag]')
      if (item) this.remove(item)
    })
  }

  /** The chosen tag names, in order. */
  names(): string[] {
    return [...this.chips.querySelectorAll<HTMLLIElement>('li[data-tag]')].map((li) => li.dataset.tag!)
  }

  /** Each chosen tag's category key (for restoring chips with their colors). */
  categories(): Record<string, string | null> {
    return Object.fromEntries(
      [...this.chips.querySelectorAll<HTMLLIElement>('li[data-tag]')].map((li) => [li.dataset.tag!, chipCategory(li)]),
    )
  }

  /** Replaces the chips (restoring a local copy of the form). */
  set(names: string[], categories: Record<string, string | null>): void {
    this.chips.replaceChildren(...names.map((name) => tagChip(name, categories[name] ?? null)))
  }

  private has(name: string): boolean {
    const lower = name.toLowerCase()
    return this.names().some((n) => n.toLowerCase() === lower)
  }

  private searchSoon(): void {
    clearTimeout(this.searchTimer)
    this.searchTimer = setTimeout(() => void this.search(), SEARCH_DELAY_MS)
  }

  private async search(): Promise<void> {
    const seq = ++this.searchSeq
    const query = this.input.value.trim()
    let found: Suggestion[]
    try {
      found = await api<Suggestion[]>('GET', `/api/tags/autocomplete/?q=${encodeURIComponent(query)}`)
    } catch {
      if (seq === this.searchSeq) this.render([], 'Tag suggestions could not be loaded')
      return
    }
    // An answer to an older query, or the box lost focus meanwhile: not shown.
    if (seq !== this.searchSeq || document.activeElement !== this.input) return
    this.render(found.filter((s) => !this.has(s.name)), query === '' ? 'No tags to suggest' : 'No matching tags')
  }

  private render(suggestions: Suggestion[], emptyText: string): void {
    // A later answer (the user kept typing) keeps the option the user had moved to, if it is still offered.
    const kept = this.active >= 0 ? this.suggestions[this.active]?.name : undefined
    this.suggestions = suggestions
    this.active = -1
    const items = suggestions.map((s, index) => {
      const item = document.createElement('li')
      item.id = `tag-option-${index}`
      item.setAttribute('role', 'option')
      item.setAttribute('aria-selected', 'false')
      item.dataset.index = String(index)
      const chip = document.createElement('span')
      chip.className = `chip${/^[a-z0-9_-]+$/.test(s.category) ? ` cat-${s.category}` : ''}`
      chip.textContent = s.name
      const category = document.createElement('span')
      category.className = 'muted tag-option-category'
      category.textContent = s.category_name
      item.append(chip, ' ', category)
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
    const keptIndex = kept === undefined ? -1 : suggestions.findIndex((s) => s.name === kept)
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

  private get open(): boolean {
    return !this.listbox.hidden
  }

  /** Makes option `index` the active one (aria-activedescendant), scrolled into view. */
  private highlight(index: number): void {
    this.active = index
    highlightOption(this.input, this.listbox, index, `tag-option-${index}`)
  }

  private onKey(event: KeyboardEvent): void {
    if (listboxKeydown(event, this.keys)) return
    if (event.key === 'Enter') {
      // Never submits the form: Enter here is for choosing a tag, even with nothing highlighted.
      event.preventDefault()
      if (!this.open) return
      const typed = this.input.value.trim().toLowerCase()
      const exact = this.suggestions.findIndex((s) => s.name.toLowerCase() === typed)
      if (exact >= 0) this.pick(exact)
      else if (this.suggestions.length === 1) this.pick(0)
    } else if (event.key === 'Backspace' && this.input.value === '' && this.input.selectionStart === 0) {
      const last = this.chips.querySelector<HTMLLIElement>('li[data-tag]:last-child')
      if (last) {
        event.preventDefault()
        this.remove(last)
      }
    }
  }

  private pick(index: number): void {
    const suggestion = this.suggestions[index]
    if (!suggestion) return
    if (!this.has(suggestion.name)) {
      this.chips.append(tagChip(suggestion.name, suggestion.category))
      this.announce(`${suggestion.name} added`)
      this.onChange()
    }
    this.input.value = ''
    this.close()
    this.input.focus()
  }

  private remove(item: HTMLLIElement): void {
    const name = item.dataset.tag!
    item.remove()
    this.announce(`${name} removed`)
    this.onChange()
    this.quietFocus = document.activeElement !== this.input
    this.input.focus()
  }

  private announce(text: string): void {
    this.live.textContent = text
  }
}

function chipCategory(item: HTMLLIElement): string | null {
  if (item.dataset.category) return item.dataset.category
  const match = /(?:^|\s)cat-([a-z0-9_-]+)/.exec(item.querySelector('.chip')?.className ?? '')
  return match?.[1] ?? null
}
