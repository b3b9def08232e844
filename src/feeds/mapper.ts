// The feeds' records as Atom documents (src/web/atom.ts). Every link is absolute, from the site's public origin.
// A feed's id is its own address without the token, so it stays the same when its owner resets the token; an
// entry's id is a URN of its row's UUID, which no rename changes. The self link is the address the reader
// asked for, token included, so a reader that follows it keeps a working address.
import type { AtomEntry, AtomFeed, AtomPerson } from '../web/atom.js'
import { MarkdownCache } from '../web/markdown.js'
import type { FeedPack, FeedVersion, PackFeed, UserFeed } from './service.js'

/** Changelogs rendered as HTML, shared by every feed: readers poll the same feeds over and over. */
const changelogs = new MarkdownCache(8 * 1024 * 1024, 5_000)

/** When a feed with no entries last changed, if it has nothing better: a fixed date, so its ETag stays the same. */
const EPOCH = '1970-01-01T00:00:00.000Z'

const GENERATOR = { name: 'Packs' }

/** Where a feed's links start and how it was asked for. */
export interface FeedLinks {
  /** The site's public origin (src/http/urls.ts publicOrigin). */
  origin: string
  /** The feed's own path, without the query. */
  path: string
  /** The address the reader asked for (the path and its query), for the self link. */
  requested: string
}

const packPage = (origin: string, pack: Pick<FeedPack, 'namespace' | 'packId'>) =>
  `${origin}/packs/${encodeURIComponent(pack.namespace)}/${encodeURIComponent(pack.packId)}/`
const profilePage = (origin: string, username: string) => `${origin}/users/${encodeURIComponent(username)}/`
const person = (origin: string, username: string): AtomPerson => ({ name: username, uri: profilePage(origin, username) })

function versionEntry(origin: string, pack: FeedPack, version: FeedVersion): AtomEntry {
  const changelog = version.changelog.trim()
  return {
    id: `urn:uuid:${version.id}`,
    title: `${pack.title} ${version.name}`,
    updated: version.createdAt,
    published: version.createdAt,
    // The version's head on the pack page, where notifications and webhooks link too.
    link: `${packPage(origin, pack)}#version-${encodeURIComponent(version.name)}`,
    author: person(origin, pack.owner),
    // The site's Markdown renderer: raw HTML in the changelog comes out escaped, links only to safe schemes.
    content: changelog === '' ? null : { type: 'html', value: changelogs.html(changelog) },
  }
}

function feedOf(links: FeedLinks, parts: Omit<AtomFeed, 'id' | 'selfUrl' | 'generator'>): AtomFeed {
  return { id: `${links.origin}${links.path}`, selfUrl: `${links.origin}${links.requested}`, generator: GENERATOR, ...parts }
}

export function packFeedDocument(feed: PackFeed, links: FeedLinks): AtomFeed {
  const { pack, versions } = feed
  return feedOf(links, {
    title: `${pack.title}: new versions`,
    subtitle: pack.summary || null,
    updated: versions[0]?.createdAt ?? pack.createdAt,
    alternateUrl: packPage(links.origin, pack),
    author: person(links.origin, pack.owner),
    entries: versions.map((version) => versionEntry(links.origin, pack, version)),
  })
}

export function userFeedDocument(feed: UserFeed, links: FeedLinks): AtomFeed {
  const { user, entries } = feed
  return feedOf(links, {
    title: `Packs by ${user.username}: new versions`,
    updated: entries[0]?.version.createdAt ?? user.createdAt,
    alternateUrl: profilePage(links.origin, user.username),
    author: person(links.origin, user.username),
    entries: entries.map(({ pack, version }) => versionEntry(links.origin, pack, version)),
  })
}

export function newPacksFeedDocument(packs: readonly FeedPack[], links: FeedLinks): AtomFeed {
  return feedOf(links, {
    title: 'New packs',
    updated: packs[0]?.createdAt ?? EPOCH,
    alternateUrl: `${links.origin}/?sort=created`,
    author: GENERATOR,
    entries: packs.map((pack) => ({
      id: `urn:uuid:${pack.id}`,
      title: pack.title,
      updated: pack.createdAt,
      published: pack.createdAt,
      link: packPage(links.origin, pack),
      author: person(links.origin, pack.owner),
      summary: pack.summary || null,
    })),
  })
}
