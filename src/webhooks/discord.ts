// A pack's event as the body of Discord's "Execute Webhook" request, so an
// owner can paste a channel's webhook URL and get one message with an embed
// per event. Discord answers 400, and the message is lost, when an embed
// breaks one of its documented limits (developers/resources/message, "Embed
// Limits"): title 256 characters, description 4096, at most 25 fields, field
// name 256 and value 1024, footer 2048, author name 256, and 6000 across all
// of those together; message content 2000. So every text is cut to its limit
// here, and if the whole is still too long the description (the changelog)
// gives way first.
//
// Characters are counted as UTF-16 code units (JavaScript's length): never
// fewer than the code points or graphemes another count would give, so a text
// within the limit here is within it for Discord. A cut falls between
// graphemes (Intl.Segmenter), so it never splits a surrogate pair, an emoji
// sequence or a letter from its accent, and ends with "…". Discord trims
// leading and trailing whitespace before counting, and refuses an empty field
// value; texts are trimmed here first and empty ones are left out.
//
// allowed_mentions is empty: a changelog saying "@everyone" must not ping a
// whole server.

export type WebhookEventType = 'version.published' | 'version.yanked' | 'version.deleted' | 'pack.edited' | 'pack.hidden' | 'pack.shown'

export interface DiscordEventInput {
  event: WebhookEventType
  pack: { title: string; url: string; thumbnailUrl?: string | null }
  /** The version the event is about (the version.* events). */
  version?: { name: string; url?: string | null; changelog?: string | null } | null
  /** Staff's reason (hidden, shown, yanked), shown as a field. */
  reason?: string | null
  /** When the event happened: an ISO 8601 date-time or a Date. */
  at: string | Date
  /** The site's name: the message's username and the embed's footer ("Packs" when not given). */
  siteName?: string | null
}

export interface DiscordEmbedField {
  name: string
  value: string
  inline?: boolean
}

export interface DiscordEmbed {
  title: string
  url: string
  description?: string
  color: number
  timestamp: string
  thumbnail?: { url: string }
  fields?: DiscordEmbedField[]
  footer?: { text: string }
  author?: { name: string; url?: string }
}

export interface DiscordMessage {
  username?: string
  embeds: DiscordEmbed[]
  allowed_mentions: { parse: [] }
}

export const DISCORD_LIMITS = {
  /** A message's own text; these messages send none, only the embed. */
  content: 2000,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  authorName: 256,
  embedTotal: 6000,
  /** A webhook's name: 1 to 80 characters (developers/resources/webhook). */
  username: 80,
} as const

const ELLIPSIS = '…'
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' })

/** `text` trimmed and, when longer than `limit` code units, cut between graphemes and ended with "…". */
export function cutText(text: string, limit: number): string {
  const trimmed = text.trim()
  if (trimmed.length <= limit) return trimmed
  if (limit < ELLIPSIS.length) return ''
  const room = limit - ELLIPSIS.length
  let end = 0
  for (const { index, segment } of graphemes.segment(trimmed)) {
    if (index + segment.length > room) break
    end = index + segment.length
  }
  return trimmed.slice(0, end).trimEnd() + ELLIPSIS
}

/** What counts towards the 6000: title, description, field names and values, footer text, author name. */
export function embedLength(embed: DiscordEmbed): number {
  let length = embed.title.length + (embed.description?.length ?? 0) + (embed.footer?.text.length ?? 0) + (embed.author?.name.length ?? 0)
  for (const field of embed.fields ?? []) length += field.name.length + field.value.length
  return length
}

/** Embed colours (Discord's own palette), by what happened: green new, orange yanked, red gone, blurple changed, grey hidden. */
const COLORS: Record<WebhookEventType, number> = {
  'version.published': 0x57f287,
  'version.yanked': 0xe67e22,
  'version.deleted': 0xed4245,
  'pack.edited': 0x5865f2,
  'pack.hidden': 0x95a5a6,
  'pack.shown': 0x57f287,
}

/** The title of each event, from the pack's title and the version's name (both already cut to fit). */
function titleOf(event: WebhookEventType, pack: string, version: string | null): string {
  const named = version === null ? pack : `${pack} ${version}`
  switch (event) {
    case 'version.published': return version === null ? `New version of ${pack}` : `New version of ${pack}: ${version}`
    case 'version.yanked': return `${named} was yanked`
    case 'version.deleted': return `${named} was deleted`
    case 'pack.edited': return `${pack} was edited`
    case 'pack.hidden': return `${pack} was hidden by staff`
    case 'pack.shown': return `${pack} is shown again`
  }
}

/** Discord refuses a webhook name with "clyde" or "discord" in it, or outside 1 to 80 characters: then none is sent and the webhook's own name shows. */
function usernameOf(siteName: string): string | undefined {
  const name = cutText(siteName, DISCORD_LIMITS.username)
  if (name === '' || /clyde|discord/i.test(name)) return undefined
  return name
}

/**
 * Cuts the description, then field values (the last first; a field whose value cannot keep a character goes),
 * then the footer, until the embed is within Discord's 6000 characters. The title and author are short by their
 * own limits, so this always ends within the total.
 */
function fitTotal(embed: DiscordEmbed): void {
  let excess = embedLength(embed) - DISCORD_LIMITS.embedTotal
  const shrink = (text: string): string => {
    const cut = cutText(text, Math.max(0, text.length - excess))
    excess -= text.length - cut.length
    return cut
  }
  if (excess > 0 && embed.description !== undefined) {
    embed.description = shrink(embed.description)
    if (embed.description === '' || embed.description === ELLIPSIS) delete embed.description
  }
  const fields = embed.fields ?? []
  for (let i = fields.length - 1; i >= 0 && excess > 0; i--) {
    const field = fields[i]!
    const value = shrink(field.value)
    if (value === '' || value === ELLIPSIS) {
      excess -= field.name.length + value.length
      fields.splice(i, 1)
    } else field.value = value
  }
  if (embed.fields !== undefined && embed.fields.length === 0) delete embed.fields
  if (excess > 0 && embed.footer !== undefined) {
    const text = shrink(embed.footer.text)
    if (text === '' || text === ELLIPSIS) delete embed.footer
    else embed.footer.text = text
  }
}

/** The Execute Webhook body for one event, within every limit Discord documents. Throws a RangeError when `at` is not a date. */
export function discordMessage(input: DiscordEventInput): DiscordMessage {
  const siteName = input.siteName?.trim() || 'Packs'
  const versionName = input.version ? cutText(input.version.name, 100) || null : null
  // The pack's title gives way in the embed's title, so the version and what happened stay readable.
  const packRoom = DISCORD_LIMITS.title - titleOf(input.event, '', versionName).length
  const title = cutText(titleOf(input.event, cutText(input.pack.title, packRoom), versionName), DISCORD_LIMITS.title)
  const embed: DiscordEmbed = {
    title,
    url: input.version?.url || input.pack.url,
    color: COLORS[input.event],
    timestamp: new Date(input.at).toISOString(),
  }
  const changelog = input.event === 'version.published' ? cutText(input.version?.changelog ?? '', DISCORD_LIMITS.description) : ''
  if (changelog !== '') embed.description = changelog
  if (input.pack.thumbnailUrl) embed.thumbnail = { url: input.pack.thumbnailUrl }
  const reason = cutText(input.reason ?? '', DISCORD_LIMITS.fieldValue)
  if (reason !== '') embed.fields = [{ name: 'Reason', value: reason }]
  embed.footer = { text: cutText(siteName, DISCORD_LIMITS.footer) }
  fitTotal(embed)
  const message: DiscordMessage = { embeds: [embed], allowed_mentions: { parse: [] } }
  const username = usernameOf(siteName)
  if (username !== undefined) message.username = username
  return message
}
