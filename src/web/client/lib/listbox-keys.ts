// The keys a combobox over a listbox (WAI-ARIA 1.2 pattern) has in common,
// for the tags field (./tag-picker.ts) and the username fields (./user-picker.ts):
//   ArrowDown / ArrowUp  open the list (searching), then move round its options
//   Enter                picks the highlighted option
//   Escape               closes an open list
// What Enter does with nothing highlighted, and Escape on a closed list,
// differs between the two (the tags field never submits a form, a username
// field does), so those cases are left to the caller.

/** What the keys act on: the picker's list, read as it stands when a key is pressed. */
export interface Listbox {
  /** Whether the options are showing. */
  open(): boolean
  /** The highlighted option's index; -1 for none. */
  active(): number
  /** How many options there are to move through (a "no matches" line is not one). */
  count(): number
  /** Fetches and shows the options (an arrow key on a closed list). */
  search(): void
  highlight(index: number): void
  pick(index: number): void
  close(): void
}

/** Handles the keys above; true when the key was one of them and has been dealt with. */
export function listboxKeydown(event: KeyboardEvent, box: Listbox): boolean {
  if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
    event.preventDefault()
    const step = event.key === 'ArrowDown' ? 1 : -1
    const count = box.count()
    const active = box.active()
    if (!box.open()) box.search()
    // Round the list: down from the last option is the first, up from none is the last.
    else if (count > 0) box.highlight(active < 0 ? (step > 0 ? 0 : count - 1) : (active + step + count) % count)
    return true
  }
  if (event.key === 'Enter' && box.open() && box.active() >= 0) {
    event.preventDefault()
    box.pick(box.active())
    return true
  }
  if (event.key === 'Escape' && box.open()) {
    event.preventDefault()
    box.close()
    return true
  }
  return false
}

/**
 * Marks option `index` of the listbox as the active one: aria-selected and the
 * "active" class on it alone, scrolled into view, and named by the input's
 * aria-activedescendant (focus stays in the input, as the pattern wants).
 */
export function highlightOption(input: HTMLInputElement, listbox: HTMLUListElement, index: number, optionId: string): void {
  for (const option of listbox.querySelectorAll<HTMLLIElement>('li[role="option"]')) {
    const selected = Number(option.dataset.index) === index
    option.setAttribute('aria-selected', String(selected))
    option.classList.toggle('active', selected)
    if (selected) option.scrollIntoView({ block: 'nearest' })
  }
  input.setAttribute('aria-activedescendant', optionId)
}
