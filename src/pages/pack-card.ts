// A pack as a card in a grid: the browse page's results and a profile's packs.
// Title and id, summary, chips, the latest version and
// what Minecraft it is for, downloads, the owner (a link to their profile),
// and "Hidden" when only its team and staff can see it.
import type { PackSummaryRecord } from '../packs/service.js'
import { formatCount, timeTag } from '../web/format.js'
import { html, type SafeHtml } from '../web/html.js'
import { chipLink, minecraftTag, packHref, thumbnail } from '../web/packs.js'

/** A user's profile page. */
export function userHref(username: string): string {
  return `/users/${encodeURIComponent(username)}/`
}

/** "1 download", "1,234 downloads". */
export function downloadsText(count: number): string {
  return `${formatCount(count)} ${count === 1 ? 'download' : 'downloads'}`
}

/** Where a card's chips and images lead. */
export interface CardLinks {
  fileUrl(fileId: string): string
  /** The listing filtered by this category key. */
  category(key: string): string
  /** The listing filtered by this tag name. */
  tag(name: string): string
}

export function packCard(pack: PackSummaryRecord, links: CardLinks): SafeHtml {
  const href = packHref(pack.namespace, pack.packId)
  const chips = [
    pack.category ? html`<li>${chipLink(pack.category.name, links.category(pack.category.key), pack.category.key, { kind: 'category' })}</li>` : null,
    ...pack.tags.map((t) => html`<li>${chipLink(t.name, links.tag(t.name), t.categoryKey)}</li>`),
  ]
  const hidden = pack.hidden || pack.ownerDisabled
  return html`<li><article class="card pack-card${hidden ? ' is-hidden' : ''}">
${thumbnail(pack.thumbnailFileId === null ? null : links.fileUrl(pack.thumbnailFileId), pack.title, 'pack-thumb')}
<div class="pack-card-body">
<h2 class="pack-title"><a href="${href}">${pack.title}</a>${hidden ? html` <span class="hidden-badge" title="Only its owner and staff see this pack">Hidden</span>` : null}</h2>
<p class="pack-ref mono">${pack.namespace}:${pack.packId}</p>
${pack.summary ? html`<p class="summary">${pack.summary}</p>` : null}
${chips.some((c) => c !== null) ? html`<ul class="chips">${chips}</ul>` : null}
<p class="meta">${pack.latest
    ? html`<span>Version <strong class="version-name">${pack.latest.name}</strong></span> ${minecraftTag(pack.latest)}`
    : html`<span class="no-version">No current version</span>`}
<span class="downloads">${downloadsText(pack.downloads)}</span>
<span>by <a class="owner" href="${userHref(pack.owner)}">${pack.owner}</a></span> <span>updated ${timeTag(pack.updatedAt)}</span></p>
</div></article></li>`
}
