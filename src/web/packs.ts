// Pieces of markup the browse page and the pack page share: chips in their
// category colors, a pack's thumbnail or its placeholder, the Minecraft
// releases a version is for.
import type { PackDeclaration } from '../minecraft/declaration.js'
import { describeDeclaration } from '../minecraft/releases.js'
import { html, type SafeHtml } from './html.js'

/** The browse page, filtered: `/?tag=Medieval`, `/?category=theme&q=castle`. Empty values are left out. */
export function browseHref(params: Record<string, string | number | undefined>): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') query.set(name, String(value))
  }
  const text = query.toString()
  return text === '' ? '/' : `/?${text}`
}

export function packHref(namespace: string, packId: string): string {
  return `/packs/${encodeURIComponent(namespace)}/${encodeURIComponent(packId)}/`
}

export interface ChipOptions {
  /** Marks the chip as the active filter. */
  selected?: boolean
  /** A hidden explanation read after the label ("tag", "category"). */
  kind?: string
}

/**
 * A link chip in a category's colors (class cat-<key>, see /assets/categories.css).
 * The active one carries aria-current, the class "selected" and a check mark.
 */
export function chipLink(label: string, href: string, categoryKey: string | null, options: ChipOptions = {}): SafeHtml {
  const classes = `chip${categoryKey ? ` cat-${categoryKey}` : ''}${options.selected ? ' selected' : ''}`
  return html`<a class="${classes}" href="${href}"${options.selected ? html` aria-current="true"` : null}>${options.selected ? html`<span aria-hidden="true">✓</span>` : null}${label}${options.kind ? html`<span class="visually-hidden"> (${options.kind})</span>` : null}</a>`
}

/** A version's raw pack_format, as pack.mcmeta calls it: the pages keep it in a title beside the releases. */
export function packFormatText(packFormat: number | null): string {
  return packFormat === null ? 'pack_format unknown' : `pack_format ${packFormat}`
}

/** What a version's archive declares: its kind and format range, and its pack_format. */
export interface VersionGame {
  declaration: PackDeclaration
  packFormat: number | null
}

/**
 * The Minecraft releases a version is for, as players read them:
 * "Minecraft 1.21.4 – 1.21.8 (resource pack)", "pack format 99 (unknown
 * Minecraft version)". The kind goes with release names, when the archive
 * shows it; beside a bare format it would read as a second, unrelated aside.
 */
export function minecraftText(version: VersionGame): string {
  const { releases, label } = describeDeclaration(version.declaration, version.packFormat)
  const kind = version.declaration.kind
  return kind === null || releases.length === 0 ? label : `${label} (${kind} pack)`
}

/** minecraftText in its element (class game-versions), with the raw pack_format in its title for those who know formats. */
export function minecraftTag(version: VersionGame): SafeHtml {
  return html`<span class="game-versions" title="${packFormatText(version.packFormat)}">${minecraftText(version)}</span>`
}

/** A pack's thumbnail, or a neutral placeholder with the title's first letter (no external image). */
export function thumbnail(url: string | null, title: string, className: string, alt = ''): SafeHtml {
  if (url !== null) return html`<img class="${className}" src="${url}" alt="${alt}" width="96" height="96">`
  const initial = [...title.trim()][0]?.toUpperCase() ?? '?'
  return html`<span class="${className} placeholder" aria-hidden="true">${initial}</span>`
}
