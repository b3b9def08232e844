// The Discord body of each event: what the embed says, and that every limit
// Discord documents holds whatever the changelog, reason or titles hold (a
// 10,000-character changelog, emoji and other surrogate pairs at the cut).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DISCORD_LIMITS, cutText, discordMessage, embedLength, type DiscordEmbed, type DiscordEventInput } from '../../src/webhooks/discord.js'

const base: DiscordEventInput = {
  event: 'version.published',
  pack: { title: 'Faithful 32x', url: 'https://packs.example/packs/demo/faithful/', thumbnailUrl: 'https://packs.example/files/thumb.png' },
  version: { name: '1.2', url: 'https://packs.example/packs/demo/faithful/versions/1.2/', changelog: '- Shinier **diamonds**\n- @everyone look' },
  at: '2026-11-24T12:00:00Z',
  siteName: 'Blocky Packs',
}

/** Every limit of developers/resources/message "Embed Limits", and the text rules Discord applies before them. */
function assertWithinLimits(embed: DiscordEmbed): void {
  const wellFormed = (text: string) => assert.ok(text.isWellFormed(), `well-formed: ${JSON.stringify(text.slice(-4))}`)
  const trimmedNonEmpty = (text: string) => assert.ok(text.length > 0 && text === text.trim(), JSON.stringify(text))
  assert.ok(embed.title.length <= DISCORD_LIMITS.title, `title ${embed.title.length}`)
  trimmedNonEmpty(embed.title)
  wellFormed(embed.title)
  if (embed.description !== undefined) {
    assert.ok(embed.description.length <= DISCORD_LIMITS.description, `description ${embed.description.length}`)
    trimmedNonEmpty(embed.description)
    wellFormed(embed.description)
  }
  assert.ok((embed.fields ?? []).length <= DISCORD_LIMITS.fields)
  for (const field of embed.fields ?? []) {
    assert.ok(field.name.length <= DISCORD_LIMITS.fieldName)
    assert.ok(field.value.length <= DISCORD_LIMITS.fieldValue, `field value ${field.value.length}`)
    trimmedNonEmpty(field.name)
    trimmedNonEmpty(field.value)
    wellFormed(field.value)
  }
  if (embed.footer !== undefined) {
    assert.ok(embed.footer.text.length <= DISCORD_LIMITS.footer)
    trimmedNonEmpty(embed.footer.text)
    wellFormed(embed.footer.text)
  }
  assert.ok(embedLength(embed) <= DISCORD_LIMITS.embedTotal, `total ${embedLength(embed)}`)
  assert.ok(!Number.isNaN(Date.parse(embed.timestamp)))
}

test('a new version: title with the version, changelog, link, thumbnail, footer, no mentions', () => {
  const message = discordMessage(base)
  assert.deepEqual(message, {
    username: 'Blocky Packs',
    allowed_mentions: { parse: [] },
    embeds: [{
      title: 'New version of Faithful 32x: 1.2',
      url: 'https://packs.example/packs/demo/faithful/versions/1.2/',
      description: '- Shinier **diamonds**\n- @everyone look',
      color: 0x57f287,
      timestamp: '2026-11-24T12:00:00.000Z',
      thumbnail: { url: 'https://packs.example/files/thumb.png' },
      footer: { text: 'Blocky Packs' },
    }],
  })
  // It is what goes over the wire: plain JSON.
  assert.deepEqual(JSON.parse(JSON.stringify(message)), message)
})

test('each event has its own title and colour; staff\'s reason is a field', () => {
  const titles = new Map<string, string>()
  for (const event of ['version.published', 'version.yanked', 'version.deleted', 'pack.edited', 'pack.hidden', 'pack.shown'] as const) {
    const [embed] = discordMessage({ ...base, event, reason: 'Broken textures' }).embeds
    assertWithinLimits(embed!)
    titles.set(event, embed!.title)
    if (event === 'version.published') assert.ok(embed!.description)
    else assert.equal(embed!.description, undefined, 'only a new version shows its changelog')
    assert.deepEqual(embed!.fields, [{ name: 'Reason', value: 'Broken textures' }])
  }
  assert.equal(titles.get('version.yanked'), 'Faithful 32x 1.2 was yanked')
  assert.equal(titles.get('version.deleted'), 'Faithful 32x 1.2 was deleted')
  assert.equal(titles.get('pack.edited'), 'Faithful 32x was edited')
  assert.equal(titles.get('pack.hidden'), 'Faithful 32x was hidden by staff')
  assert.equal(titles.get('pack.shown'), 'Faithful 32x is shown again')
  // Without a version or its URL the link is the pack's; without a reason there is no field.
  const [edited] = discordMessage({ event: 'pack.edited', pack: { title: 'P', url: 'https://packs.example/p/' }, at: new Date(0) }).embeds
  assert.equal(edited!.url, 'https://packs.example/p/')
  assert.equal(edited!.fields, undefined)
  assert.equal(edited!.thumbnail, undefined)
  assert.equal(edited!.footer?.text, 'Packs')
  assert.equal(edited!.timestamp, '1970-01-01T00:00:00.000Z')
})

test('a 10,000-character changelog is cut to 4096 with "…", and the whole embed stays within 6000', () => {
  const changelog = 'x'.repeat(10_000)
  const [embed] = discordMessage({ ...base, version: { name: '1.2', changelog } }).embeds
  assertWithinLimits(embed!)
  assert.equal(embed!.description!.length, DISCORD_LIMITS.description)
  assert.ok(embed!.description!.endsWith('x…'))
})

test('a cut never splits a surrogate pair or an emoji sequence', () => {
  // Emoji (two UTF-16 units each) placed so that the cut at 4095 falls in the middle of one.
  for (const offset of [0, 1]) {
    const changelog = 'a'.repeat(offset) + '😀'.repeat(5_000)
    const [embed] = discordMessage({ ...base, version: { name: '1.2', changelog } }).embeds
    assertWithinLimits(embed!)
    const description = embed!.description!
    assert.ok(description.endsWith('😀…'), JSON.stringify(description.slice(-4)))
    assert.ok(description.length >= DISCORD_LIMITS.description - 2)
  }
  // A family emoji is five code points joined by zero-width joiners (11 units): it stays whole or goes whole.
  const family = '👨‍👩‍👧‍👦'
  for (let limit = 1; limit < 40; limit++) {
    const cut = cutText(family.repeat(3), limit)
    assert.ok(cut.length <= limit)
    assert.ok(cut.isWellFormed())
    const kept = cut.endsWith('…') ? cut.slice(0, -1) : cut
    assert.equal(kept.replaceAll(family, ''), '', `${limit}: ${JSON.stringify(kept)}`)
  }
  // A letter keeps its combining accent.
  assert.equal(cutText('e\u0301'.repeat(10), 4), 'e\u0301…')
})

test('huge titles, reason and site name: every limit and the 6000 total hold', () => {
  const huge = (unit: string) => unit.repeat(10_000)
  for (const unit of ['x', '😀', 'é', ' ']) {
    const [embed] = discordMessage({
      event: 'version.yanked',
      pack: { title: huge(unit), url: 'https://packs.example/p/' },
      version: { name: huge(unit), changelog: huge(unit) },
      reason: huge(unit),
      at: '2026-11-24T12:00:00Z',
      siteName: huge(unit),
    }).embeds
    // Only spaces: Discord trims them, so nothing empty is sent (no reason field, the default footer).
    if (unit === ' ') assert.equal(embed!.fields, undefined)
    assertWithinLimits(embed!)
  }
  for (const unit of ['x', '😀']) {
    const [embed] = discordMessage({
      event: 'version.published',
      pack: { title: huge(unit), url: 'https://packs.example/p/' },
      version: { name: huge(unit), changelog: huge(unit) },
      reason: huge(unit),
      at: '2026-11-24T12:00:00Z',
      siteName: huge(unit),
    }).embeds
    assertWithinLimits(embed!)
    // The changelog gave way: title, reason and footer took 256 + 1030 + 2048.
    assert.ok(embed!.description!.length > 2000)
    assert.ok(embedLength(embed!) > DISCORD_LIMITS.embedTotal - 4, `${embedLength(embed!)}`)
  }
})

test('a long pack title gives way in the title, so the version stays', () => {
  const [embed] = discordMessage({ ...base, pack: { ...base.pack, title: 'P'.repeat(400) } }).embeds
  assert.equal(embed!.title.length, DISCORD_LIMITS.title)
  assert.ok(embed!.title.endsWith('…: 1.2'), embed!.title.slice(-10))
})

test('the username is left out when Discord would refuse it', () => {
  assert.equal(discordMessage({ ...base, siteName: 'Packs for Discord' }).username, undefined)
  assert.equal(discordMessage({ ...base, siteName: 'clyde\'s packs' }).username, undefined)
  assert.equal(discordMessage({ ...base, siteName: 'n'.repeat(100) }).username!.length, DISCORD_LIMITS.username)
  assert.equal(discordMessage({ ...base, siteName: null }).username, 'Packs')
})

test('cutText: trims, keeps short text, and counts "…" within the limit', () => {
  assert.equal(cutText('  hello  ', 10), 'hello')
  assert.equal(cutText('hello world', 11), 'hello world')
  assert.equal(cutText('hello world', 7), 'hello…')
  assert.equal(cutText('hello world', 1), '…')
  assert.equal(cutText('hello', 0), '')
})

test('an invalid date is refused', () => {
  assert.throws(() => discordMessage({ ...base, at: 'yesterday' }), RangeError)
})
