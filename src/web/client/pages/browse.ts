// The browse page, searched as one types: the page works as a plain GET form
// and links (src/pages/browse.ts); this script fetches the same page for the
// form's new URL and swaps in its results and filter counts, without a page
// load. The URL stays the whole state: typing replaces the history entry
// (one entry per search, not per letter), a filter, the sort or a link of the
// results (a page, a chip, a "without" suggestion) adds one, and the back and
// forward buttons bring a state back the same way.
const form = document.getElementById('browse-form')
const results = document.getElementById('results')
const options = document.getElementById('filter-options')
if (form instanceof HTMLFormElement && results && options) setUpBrowse(form, results, options)

/** How long typing pauses before the search runs. */
const TYPING_PAUSE_MS = 250

/** The query parameters in the order the server writes its links, so the two agree on a state's URL. */
const ORDER = ['q', 'kind', 'mc', 'categories', 'tags', 'updated', 'owner', 'member', 'sort'] as const

function setUpBrowse(form: HTMLFormElement, results: HTMLElement, options: HTMLElement): void {
  const q = form.elements.namedItem('q') as HTMLInputElement
  const live = document.getElementById('browse-live')
  let typingTimer: ReturnType<typeof setTimeout> | undefined
  let inFlight: AbortController | undefined

  // The panel is rendered folded (for a phone); a wide screen shows it open. Where CSS can show a folded
  // panel's content (::details-content) this changes nothing; elsewhere it is what opens it.
  const details = document.getElementById('filter-details')
  if (details instanceof HTMLDetailsElement && window.matchMedia('(min-width: 48.01rem)').matches) details.open = true

  // Filters apply as they change: the panel's own submit button is for pages without this script.
  for (const button of document.querySelectorAll<HTMLButtonElement>('.apply-filters')) button.hidden = true

  /** The URL the form stands for now: empty fields left out, lists comma-separated, back to page 1. */
  function formUrl(): string {
    const data = new FormData(form)
    const params = new URLSearchParams()
    for (const name of ORDER) {
      const values = data.getAll(name).map((v) => String(v).trim()).filter(Boolean)
      if (values.length > 0) params.set(name, values.join(','))
    }
    const text = params.toString()
    return text === '' ? '/' : `/?${text}`
  }

  /** Fetches the page of `url` and shows it; history is already where it should be. */
  async function show(url: string): Promise<void> {
    inFlight?.abort()
    const controller = new AbortController()
    inFlight = controller
    results.setAttribute('aria-busy', 'true')
    let response: Response
    let text: string
    try {
      response = await fetch(url, { headers: { accept: 'text/html' }, signal: controller.signal, credentials: 'same-origin' })
      text = await response.text()
    } catch {
      // Offline or the server gone: let the browser load the page and say so (unless a newer search took over).
      if (!controller.signal.aborted) window.location.assign(url)
      return
    } finally {
      if (inFlight === controller) results.removeAttribute('aria-busy')
    }
    if (controller.signal.aborted) return
    const next = new DOMParser().parseFromString(text, 'text/html')
    const nextResults = next.getElementById('results')
    const nextOptions = next.getElementById('filter-options')
    if (response.status === 503 || response.status === 429) {
      // Busy (too many searches at once): say so and keep what is shown, rather than leave the page mid-typing.
      notice(results, 'The site is busy, so these results are not the latest: try again in a moment.')
      return
    }
    notice(results, null)
    if (!response.ok || !nextResults || !nextOptions) {
      // A refusal (a 400 for a hand-made URL, a 404 past the last page) is the site's error page: show it as one.
      window.location.assign(url)
      return
    }
    swap(results, nextResults)
    swap(options, nextOptions)
    const summary = document.querySelector('.filter-details > summary')
    const nextSummary = next.querySelector('.filter-details > summary')
    if (summary && nextSummary) summary.innerHTML = nextSummary.innerHTML
    for (const name of ['owner', 'member']) syncHidden(form, next, name)
    document.title = next.title
    for (const button of document.querySelectorAll<HTMLButtonElement>('.apply-filters')) button.hidden = true
    if (live) live.textContent = document.getElementById('result-count')?.textContent ?? ''
  }

  /**
   * The search box as the URL has it. Only for a state that comes from
   * elsewhere (a link, Back): while typing, the box is the source, and a
   * search that comes back must not undo the letters typed meanwhile.
   */
  function fillSearchBox(url: string): void {
    q.value = new URL(url, location.href).searchParams.get('q') ?? ''
  }

  function go(url: string, mode: 'push' | 'replace', fromLink = false): void {
    if (url === location.pathname + location.search) return
    if (mode === 'push') history.pushState(null, '', url)
    else history.replaceState(null, '', url)
    if (fromLink) fillSearchBox(url)
    void show(url)
  }

  q.addEventListener('input', () => {
    clearTimeout(typingTimer)
    typingTimer = setTimeout(() => go(formUrl(), 'replace'), TYPING_PAUSE_MS)
  })

  // A filter or the sort changed (any control of the form but the search box).
  document.addEventListener('change', (event) => {
    const target = event.target
    if (!(target instanceof HTMLInputElement || target instanceof HTMLSelectElement) || target.form !== form || target === q) return
    clearTimeout(typingTimer)
    go(formUrl(), 'push')
  })

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    clearTimeout(typingTimer)
    go(formUrl(), 'push')
  })

  // Links to another state of this page (the pager, a card's chip, a filter to drop): the same, without a load.
  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    const link = event.target instanceof Element ? event.target.closest('a') : null
    if (!link || !(link.closest('#results') || link.closest('#filter-options'))) return
    const url = new URL(link.href, location.href)
    if (url.origin !== location.origin || url.pathname !== '/' || link.target) return
    event.preventDefault()
    go(url.pathname + url.search, 'push', true)
    // A new page of results starts at its top.
    if (link.closest('.pagination')) results.scrollIntoView({ block: 'start' })
  })

  window.addEventListener('popstate', () => {
    clearTimeout(typingTimer)
    fillSearchBox(location.href)
    void show(location.pathname + location.search)
  })
}

/** A line at the top of the results saying why they did not change; null takes it away (as new results do). */
function notice(results: HTMLElement, message: string | null): void {
  let line = document.getElementById('browse-notice')
  if (message === null) {
    line?.remove()
    return
  }
  if (!line) {
    line = document.createElement('p')
    line.id = 'browse-notice'
    line.className = 'error'
    line.setAttribute('role', 'alert')
    results.prepend(line)
  }
  line.textContent = message
}

/**
 * Replaces `current`'s content with `next`'s, keeping what the person was
 * doing: the focused control (found again by its name and value, or its id)
 * and which "more" lists were open.
 */
function swap(current: HTMLElement, next: HTMLElement): void {
  const active = document.activeElement
  const focusKey = active && current.contains(active) ? keyOf(active) : null
  const open = new Set([...current.querySelectorAll('details[open]')].map((d) => d.id).filter(Boolean))
  current.replaceChildren(...[...next.childNodes].map((node) => document.importNode(node, true)))
  for (const id of open) {
    const details = document.getElementById(id)
    if (details instanceof HTMLDetailsElement) details.open = true
  }
  if (focusKey) {
    const again = [...current.querySelectorAll<HTMLElement>('input, select, a, button, summary')].find((el) => keyOf(el) === focusKey)
    if (again) {
      // A focused control inside a closed "more" list opens it, so focus is never lost in something hidden.
      const details = again.closest('details.more-options')
      if (details instanceof HTMLDetailsElement && again.tagName !== 'SUMMARY') details.open = true
      again.focus()
    }
  }
}

function keyOf(element: Element): string {
  if (element instanceof HTMLInputElement) return `input ${element.name} ${element.value}`
  if (element.id) return `#${element.id}`
  if (element instanceof HTMLAnchorElement) return `a ${element.getAttribute('href') ?? ''}`
  if (element.tagName === 'SUMMARY') return `summary ${element.parentElement?.id ?? ''}`
  return element.tagName
}

/** Makes a hidden field of the search form (owner, member) what the fetched page has. */
function syncHidden(form: HTMLFormElement, next: Document, name: string): void {
  const mine = form.querySelector<HTMLInputElement>(`input[type="hidden"][name="${name}"]`)
  const theirs = next.querySelector<HTMLInputElement>(`#browse-form input[type="hidden"][name="${name}"]`)
  if (theirs && mine) mine.value = theirs.value
  else if (theirs) form.append(document.importNode(theirs, true))
  else mine?.remove()
}
