// A site's worth of packs for testing search relevance (test/http/search-relevance.test.ts): over 300
// resource and data packs with the titles, summaries, descriptions, tags, categories, owners and teams a
// real pack host has, and the queries a person types with the pack they expect to find.
//
// Written to be read: every title is a name a pack could have. Part of the corpus is composed (styles ×
// subjects of texture packs, biomes × structures, mobs × changes, wood GUIs), the rest is written out one
// pack a line. Near-duplicates that would make a query's answer a matter of taste are avoided: where two
// packs could both be "the" answer (Faithful 32x and 64x), the query names what tells them apart.
//
// Seeding goes through the HTTP API as a creator would (a draft, an archive upload, publish; co-authors
// invited by the draft and accepting), several packs at a time, each archive built for its pack (a pack's
// bytes are its own: src/packs/archive-claims.ts).
import assert from 'node:assert/strict'
import { createHash, randomUUID } from 'node:crypto'
import { createCategory, createTag } from '../../src/packs/tags.js'
import { slugify } from '../../src/packs/slugs.js'
import type { TestSite, TestUser } from './app.js'
import { png, zip } from './fixtures.js'
import { saveDraft, upload, type PackJson } from './packs.js'

export type PackKind = 'resource' | 'data'

export interface CorpusPack {
  owner: string
  kind: PackKind
  /** A category key (CATEGORIES). */
  category: string
  /** Tag names (TAGS), 1 to 4. */
  tags: string[]
  title: string
  summary: string
  /** Markdown. */
  description: string
  /** Co-authors invited on publish who accept. */
  team: string[]
  /** Co-authors invited on publish who never answer: their names must not find the pack. */
  invited: string[]
}

export interface CorpusQuery {
  query: string
  /** namespace:pack_id of the pack a person typing the query wants. */
  expect: string
  why: string
}

export const CATEGORIES: ReadonlyArray<{ key: string; name: string; color: string }> = [
  { key: 'textures', name: 'Textures', color: '#7a5230' },
  { key: 'ui', name: 'Interface & Fonts', color: '#3b5b92' },
  { key: 'audio', name: 'Sounds & Music', color: '#8a3f8f' },
  { key: 'worldgen', name: 'World Generation', color: '#2e7d32' },
  { key: 'structures', name: 'Structures', color: '#795548' },
  { key: 'mobs', name: 'Mobs & Creatures', color: '#c62828' },
  { key: 'gameplay', name: 'Gameplay', color: '#f9a825' },
  { key: 'qol', name: 'Quality of Life', color: '#00838f' },
  { key: 'technical', name: 'Redstone & Technical', color: '#b71c1c' },
  { key: 'decoration', name: 'Decoration', color: '#6d4c41' },
  { key: 'challenges', name: 'Challenges', color: '#4527a0' },
]

/** Tag name → category key. */
export const TAGS: Readonly<Record<string, string>> = {
  'Realistic': 'textures', 'Cartoon': 'textures', 'Vanilla Style': 'textures', 'Pastel': 'textures', 'Dark': 'textures',
  'Medieval': 'textures', 'Fantasy': 'textures', 'Sci-Fi': 'textures', 'Steampunk': 'textures', 'High Resolution': 'textures',
  'Animated': 'textures', 'Connected Textures': 'textures', 'Emissive': 'textures', 'Minimalist': 'textures',
  'GUI': 'ui', 'HUD': 'ui', 'Fonts': 'ui', 'Tooltips': 'ui', 'Menus': 'ui',
  'Ambience': 'audio', 'Music': 'audio', 'Sound Effects': 'audio',
  'Biomes': 'worldgen', 'Caves': 'worldgen', 'Terrain': 'worldgen', 'Oceans': 'worldgen', 'Nether': 'worldgen', 'The End': 'worldgen',
  'Dungeons': 'structures', 'Villages': 'structures', 'Ruins': 'structures', 'Towers': 'structures',
  'Mobs': 'mobs', 'Bosses': 'mobs', 'Pets': 'mobs', 'Horror': 'mobs',
  'Survival': 'gameplay', 'Hardcore': 'gameplay', 'Magic': 'gameplay', 'Loot': 'gameplay', 'Enchantments': 'gameplay',
  'Recipes': 'gameplay', 'Farming': 'gameplay', 'Cooking': 'gameplay', 'Exploration': 'gameplay', 'Combat': 'gameplay',
  'Quality of Life': 'qol', 'Multiplayer': 'qol', 'Accessibility': 'qol',
  'Redstone': 'technical', 'Automation': 'technical', 'Debug': 'technical',
  'Building': 'decoration', 'Furniture': 'decoration', 'Lighting': 'decoration',
  'Skyblock': 'challenges', 'Challenge': 'challenges', 'Minigames': 'challenges',
}

/** Who publishes. nightjar has one pack and glimmerwick two; the others many. */
export const OWNERS = [
  'pixelsmith', 'redstone_rose', 'tweakery', 'emberfox', 'mossy_mage', 'quartzquill', 'tidecaller', 'deepslate_dan', 'nightjar', 'glimmerwick',
] as const
/** Who only works in others' teams. */
export const MEMBERS = ['lanternjack', 'cobble_cat', 'hollowbark'] as const

const INSTALL: Record<PackKind, string> = {
  resource: 'Put the zip in your `resourcepacks` folder and turn it on under Options → Resource Packs.',
  data: 'Put the zip in your world\'s `datapacks` folder and run `/reload`.',
}

function description(kind: PackKind, summary: string, detail: string | undefined, bullets: string[]): string {
  const parts = [summary]
  if (detail) parts.push(detail)
  if (bullets.length > 0) parts.push(bullets.map((b) => `- ${b}`).join('\n'))
  parts.push(`## Install\n\n${INSTALL[kind]} Made for Minecraft Java Edition 1.21; this pack changes nothing else.`)
  return parts.join('\n\n')
}

interface Extra {
  detail?: string
  bullets?: string[]
  team?: string[]
  invited?: string[]
}

const packs: CorpusPack[] = []

function add(owner: string, kind: PackKind, category: string, tags: string[], title: string, summary: string, extra: Extra = {}): void {
  packs.push({
    owner, kind, category, tags, title, summary,
    description: description(kind, summary, extra.detail, extra.bullets ?? []),
    team: extra.team ?? [], invited: extra.invited ?? [],
  })
}

// ------------------------------------------------------------------ composed: texture styles × subjects

const STYLES: ReadonlyArray<{ name: string; owner: string; look: string; resolution: string; tags: string[]; note?: string }> = [
  { name: 'Painted', owner: 'pixelsmith', look: 'with hand-painted brush strokes', resolution: '32x', tags: ['Fantasy', 'High Resolution'] },
  { name: 'Pastel', owner: 'quartzquill', look: 'in soft pastel shades', resolution: '16x', tags: ['Pastel'] },
  { name: 'Gritty', owner: 'emberfox', look: 'worn, scratched and weathered', resolution: '64x', tags: ['Realistic', 'Dark', 'High Resolution'] },
  { name: 'Retro', owner: 'pixelsmith', look: 'as they looked in the early alpha days, faithful to the old palette', resolution: '16x', tags: ['Vanilla Style'] },
  { name: 'Crisp', owner: 'pixelsmith', look: 'with sharp edges and clean flat shading', resolution: '16x', tags: ['Minimalist'] },
  { name: 'Rustic', owner: 'emberfox', look: 'in warm timber and wrought iron tones', resolution: '32x', tags: ['Medieval'], note: 'Made with castle builds in mind.' },
  { name: 'Frosted', owner: 'mossy_mage', look: 'dusted with frost and icy blue highlights', resolution: '16x', tags: ['Fantasy'] },
  { name: 'Storybook', owner: 'quartzquill', look: 'with bold outlines like a picture book', resolution: '16x', tags: ['Cartoon'] },
  { name: 'Sketched', owner: 'quartzquill', look: 'in pencil lines on cream paper', resolution: '32x', tags: ['Cartoon', 'Minimalist'] },
  { name: 'Ashen', owner: 'tidecaller', look: 'in burnt, ashen greys with ember highlights', resolution: '16x', tags: ['Dark', 'Fantasy'] },
]

const SUBJECTS: ReadonlyArray<{ name: string; what: string; bullets: string[] }> = [
  { name: 'Foliage', what: 'Leaves, grass, ferns and vines', bullets: ['Every leaf block, including azalea and cherry', 'Tall grass and ferns'] },
  { name: 'Skies', what: 'The sun, the moon, the stars and the clouds', bullets: ['Moon phases redrawn', 'Softer cloud edges'] },
  { name: 'Bricks', what: 'Bricks, tiles and cut stonework', bullets: ['Stone, mud and nether bricks', 'Chiseled variants'] },
  { name: 'Wool', what: 'Wool, carpets and banners in all sixteen colors', bullets: ['Matching carpets', 'Banner bases'] },
  { name: 'Food', what: 'Bread, stews, fruit and every other food item', bullets: ['Cakes and pies', 'Cooked and raw meat told apart at a glance'] },
  { name: 'Potions', what: 'Potion bottles, splash potions and tipped arrows', bullets: ['A distinct bottle shape for lingering potions'] },
  { name: 'Armor', what: 'Every armor set from leather to netherite, worn and in the inventory', bullets: ['Armor trims follow the new shapes'] },
  { name: 'Tools', what: 'Pickaxes, axes, shovels and hoes from wood to netherite', bullets: ['Each material with its own handle'] },
  { name: 'Planks', what: 'Planks, logs, doors and trapdoors of every wood', bullets: ['Doors with visible hinges', 'Log tops with growth rings'] },
  { name: 'Paintings', what: 'The paintings on your walls', bullets: ['Every painting repainted in the same spirit'] },
  { name: 'Particles', what: 'Smoke, flame, splash and critical hit particles', bullets: ['Less clutter in fights'] },
  { name: 'Ores', what: 'Coal, iron, gold, diamond and every other ore', bullets: ['Deepslate variants included'] },
]

STYLES.forEach((style, i) => {
  for (let j = 0; j < 6; j++) {
    const subject = SUBJECTS[(i * 5 + j) % SUBJECTS.length]!
    add(style.owner, 'resource', 'textures', style.tags, `${style.name} ${subject.name}`, `${subject.what}, redrawn ${style.look}.`, {
      detail: `Drawn at ${style.resolution}. Pairs well with the other ${style.name.toLowerCase()} packs by ${style.owner}.${style.note ? ` ${style.note}` : ''}`,
      bullets: subject.bullets,
    })
  }
})

// ------------------------------------------------------------------ composed: biomes × structures

const BIOMES: ReadonlyArray<{ name: string; where: string }> = [
  { name: 'Desert', where: 'deserts' },
  { name: 'Jungle', where: 'jungles and bamboo thickets' },
  { name: 'Taiga', where: 'taigas and old growth spruce forests' },
  { name: 'Swamp', where: 'swamps and mangrove swamps' },
  { name: 'Badlands', where: 'the badlands and their eroded mesas' },
  { name: 'Savanna', where: 'savannas and windswept plateaus' },
  { name: 'Snowy', where: 'snowy plains, slopes and frozen peaks' },
  { name: 'Cherry Grove', where: 'cherry groves' },
  { name: 'Birch Forest', where: 'birch forests' },
  { name: 'Stony Shore', where: 'stony shores and sea cliffs' },
]

const STRUCTURES: ReadonlyArray<{ name: string; what: string; tags: string[] }> = [
  { name: 'Wells', what: 'Old wells, some dry, some hiding a chest at the bottom', tags: ['Exploration'] },
  { name: 'Shrines', what: 'Small shrines with an offering chest and a hint of magic', tags: ['Exploration', 'Magic'] },
  { name: 'Watchtowers', what: 'Tall watchtowers with a lookout and a banner on top', tags: ['Towers'] },
  { name: 'Camps', what: 'Abandoned travellers\' camps with a bedroll and a campfire', tags: ['Exploration'] },
  { name: 'Graveyards', what: 'Fenced graveyards with a crypt below', tags: ['Dungeons'] },
  { name: 'Ruins', what: 'Crumbling ruins with loot under the rubble', tags: ['Ruins', 'Loot'] },
  { name: 'Huts', what: 'Lonely huts with a hermit\'s belongings', tags: ['Exploration'] },
  { name: 'Bridges', what: 'Rope and stone bridges across rivers and ravines', tags: ['Building'] },
  { name: 'Outposts', what: 'Fortified outposts held by pillagers', tags: ['Combat'] },
  { name: 'Mines', what: 'Small abandoned mines with carts and ore left behind', tags: ['Loot'] },
]

BIOMES.forEach((biome, i) => {
  for (let j = 0; j < 4; j++) {
    const structure = STRUCTURES[(i * 3 + j) % STRUCTURES.length]!
    // emberfox makes one structure pack per biome; deepslate_dan the rest.
    add(j === 0 ? 'emberfox' : 'deepslate_dan', 'data', 'structures', structure.tags, `${biome.name} ${structure.name}`,
      `${structure.what}, scattered across ${biome.where}.`, {
        detail: `Built from blocks found in ${biome.where}, so they blend in. Rare enough that finding one feels like a discovery.`,
      })
  }
})

// ------------------------------------------------------------------ composed: mobs × changes

const MOBS: ReadonlyArray<{ one: string; many: string; variants: string; smarter: string }> = [
  { one: 'Creeper', many: 'Creepers', variants: 'mossy, sandy and snowy creepers', smarter: 'wait behind corners and stop hissing when you back away' },
  { one: 'Zombie', many: 'Zombies', variants: 'miners, farmers and knights among the zombies', smarter: 'break weak doors together and chase by smell' },
  { one: 'Skeleton', many: 'Skeletons', variants: 'archers, wanderers and sunken skeletons', smarter: 'keep their distance and lead their shots' },
  { one: 'Spider', many: 'Spiders', variants: 'jumping, wolf and cave spider cousins', smarter: 'spin webs around you and climb to ambush' },
  { one: 'Enderman', many: 'Endermen', variants: 'endermen tinted by the biome they roam', smarter: 'put back the blocks they took' },
  { one: 'Phantom', many: 'Phantoms', variants: 'storm, ash and moonlit phantoms', smarter: 'circle higher and swoop only in the dark' },
  { one: 'Pillager', many: 'Pillagers', variants: 'captains, scouts and crossbow veterans', smarter: 'retreat when wounded and call for help' },
  { one: 'Witch', many: 'Witches', variants: 'swamp, forest and desert witches', smarter: 'brew the right potion for the fight' },
  { one: 'Slime', many: 'Slimes', variants: 'honey, magma-touched and moss slimes', smarter: 'merge back together when they meet' },
  { one: 'Ghast', many: 'Ghasts', variants: 'young, ancient and soul ghasts', smarter: 'keep out of bow range and fire in volleys' },
  { one: 'Piglin', many: 'Piglins', variants: 'hunters, traders and brute piglins', smarter: 'remember who stole from their chests' },
  { one: 'Drowned', many: 'Drowned', variants: 'coral-crusted, kelp and frozen drowned', smarter: 'pull you under in groups and throw their tridents' },
]

for (const mob of MOBS) {
  add('mossy_mage', 'resource', 'mobs', ['Mobs'], `${mob.one} Variants`, `Adds ${mob.variants}, chosen by biome.`, {
    bullets: ['Textures only, works on servers', 'Variants chosen with random textures, no mod needed'],
  })
  add('mossy_mage', 'data', 'mobs', ['Mobs', 'Combat'], `Smarter ${mob.many}`, `${mob.many} ${mob.smarter}.`, {
    detail: 'Harder fights without more health or damage: only how they behave changes.',
  })
}

// ------------------------------------------------------------------ composed: GUIs in the colors of each wood

const WOODS = ['Oak', 'Spruce', 'Birch', 'Dark Oak', 'Jungle', 'Acacia', 'Mangrove', 'Cherry', 'Crimson', 'Warped', 'Bamboo'] as const
for (const wood of WOODS) {
  add('quartzquill', 'resource', 'ui', ['GUI', 'Menus'], `${wood} GUI`, `Inventories, chests and menus framed in ${wood.toLowerCase()} planks.`, {
    bullets: ['Crafting table, furnace and anvil screens', 'Readable text on every background'],
  })
}

// ------------------------------------------------------------------ written out: textures

add('pixelsmith', 'resource', 'textures', ['Vanilla Style', 'High Resolution'], 'Faithful 32x', 'The default textures at twice the resolution, faithful to the original look.', {
  bullets: ['Every block and item', 'Updated for 1.21'],
})
add('pixelsmith', 'resource', 'textures', ['Vanilla Style', 'High Resolution'], 'Faithful 64x', 'The default textures at four times the resolution, faithful to the original look.', {
  bullets: ['Every block and item', 'Needs a stronger graphics card than the 32x edition'],
})
add('pixelsmith', 'resource', 'textures', ['Vanilla Style', 'Quality of Life'], 'Better Ores Outline', 'A dark outline around every ore so veins stand out from the stone.', {
  bullets: ['Coal, iron, copper, gold, redstone, lapis, diamond and emerald', 'Works with deepslate ores'],
})
add('pixelsmith', 'resource', 'textures', ['Emissive'], 'Glowing Ores', 'Ores that glow faintly in dark caves, without lighting the area.', {
  detail: 'The glow is part of the texture only: it helps you see, it changes no light levels.',
})
add('pixelsmith', 'resource', 'textures', ['Steampunk', 'Animated'], 'Brass & Gears', 'Copper, brass and turning gears all over redstone blocks and machines.', {
  bullets: ['Animated pistons and observers', 'Pressure gauges on furnaces'],
})
add('pixelsmith', 'resource', 'textures', ['Connected Textures', 'Vanilla Style'], 'Connected Glass', 'Glass and glass panes without the borders between neighbouring blocks.', {
  detail: 'Uses the game\'s own block models, so no OptiFine needed.',
})
add('pixelsmith', 'resource', 'mobs', ['Cartoon', 'Mobs'], 'Chibi Mobs', 'Rounder, cuter mobs with big eyes.')
add('pixelsmith', 'resource', 'textures', ['Dark', 'Lighting'], 'Darker Nights', 'Nights dark enough that every torch matters.')
add('pixelsmith', 'resource', 'textures', ['Vanilla Style'], 'Better Grass', 'Grass block sides that match the top, so hills look like one green slope.')
add('pixelsmith', 'resource', 'textures', ['Vanilla Style'], 'Better Leaves', 'Bushier leaves that stick out past the block edge.')
add('emberfox', 'resource', 'textures', ['Lighting', 'Medieval'], 'Better Lanterns', 'Lanterns with wrought iron frames and a flickering candle inside.', {
  bullets: ['Soul lanterns in blue glass', 'Animated flame'],
})
add('emberfox', 'resource', 'textures', ['Medieval'], 'Better Beds', 'Beds with carved headboards and quilted covers in every color.')
add('quartzquill', 'resource', 'textures', ['Emissive', 'Mobs'], 'Glowing Mob Eyes', 'Spiders, endermen and phantoms with eyes that shine in the dark.')
add('quartzquill', 'resource', 'textures', ['Enchantments', 'Animated'], 'Enchantment Glint Colors', 'A different glint color for each kind of enchantment.', {
  bullets: ['Purple for protection, red for sharpness, green for efficiency'],
})
add('pixelsmith', 'resource', 'textures', ['Realistic'], 'Netherite Tools Remastered', 'Netherite pickaxes, swords and axes with molten seams and a dark sheen.')
add('emberfox', 'resource', 'textures', ['Sci-Fi', 'Emissive'], 'Neon Nether', 'Glowing neon edges on nether blocks, like a city at night.')
add('emberfox', 'resource', 'textures', ['Dark', 'Fantasy'], 'Halloween Pumpkins', 'Carved pumpkins and jack o\'lanterns with a different face on every side.', {
  detail: 'Spooky, but not a horror pack: the faces are silly more often than scary.',
})
add('tidecaller', 'resource', 'textures', ['Realistic', 'Animated'], 'Clearer Water', 'Water you can see through further, with gentle animated ripples.', {
  detail: 'Spot axolotls and drowned from the surface.',
})
add('mossy_mage', 'resource', 'textures', ['Fantasy', 'Animated'], 'Swaying Foliage', 'Leaves and grass that sway in the wind.')
add('quartzquill', 'resource', 'textures', ['Minimalist', 'Pastel'], 'Soft Shadows', 'Lighter block shading for a gentle, sunlit look.')

// ------------------------------------------------------------------ written out: the Vanilla Tweaks series

const TWEAKS: ReadonlyArray<[PackKind, string, string[], string, string]> = [
  ['resource', 'textures', ['Ambience', 'Accessibility'], 'Quieter Rain', 'Rain and thunder at half the volume, so you can still hear mobs.'],
  ['resource', 'audio', ['Sound Effects'], 'Quieter Portals', 'Nether portals hum softly instead of droning.'],
  ['resource', 'textures', ['Vanilla Style'], 'Shorter Grass', 'Tall grass and ferns cut down to half height so they do not block your view.'],
  ['resource', 'textures', ['Accessibility'], 'Lower Fire', 'The fire overlay sits lower on screen when you are burning.'],
  ['resource', 'textures', ['Combat'], 'Lower Shield', 'A raised shield covers less of the screen.'],
  ['resource', 'textures', ['Connected Textures'], 'Borderless Glass', 'Plain glass with its frame removed.'],
  ['resource', 'ui', ['HUD'], 'Numbered Hotbar', 'Slot numbers one to nine printed under the hotbar.'],
  ['resource', 'ui', ['HUD', 'Accessibility'], 'Clear Hearts', 'Hearts with outlines that stay readable on bright skies.'],
  ['resource', 'textures', ['Minimalist'], 'Smoother Stone', 'Stone without its speckles, for builders who want a calmer wall.'],
  ['resource', 'textures', ['Vanilla Style'], 'Variated Cobblestone', 'Cobblestone with four random variants so walls do not tile.'],
  ['resource', 'textures', ['Accessibility'], 'Visible Tripwires', 'Tripwire string you can actually spot.'],
  ['resource', 'textures', ['Accessibility'], 'Brighter Nether Ores', 'Nether gold and quartz that stand out from netherrack.'],
  ['data', 'gameplay', ['Multiplayer', 'Quality of Life'], 'Sleep Vote', 'Skip the night when half the players are in bed.'],
  ['data', 'gameplay', ['Survival'], 'Silence Mobs', 'Name a mob "silence me" to quieten it for good.'],
  ['data', 'gameplay', ['Survival'], 'Anti Enderman Grief', 'Endermen no longer pick up blocks.'],
  ['data', 'gameplay', ['Survival'], 'Anti Creeper Grief', 'Creeper explosions hurt players but leave your builds standing.'],
  ['data', 'gameplay', ['Farming', 'Quality of Life'], 'Right Click Harvest', 'Right click a ripe crop to harvest and replant it.'],
  ['data', 'gameplay', ['Survival'], 'Unlock All Recipes', 'Every recipe unlocked in the recipe book from the start.'],
  ['data', 'gameplay', ['Survival'], 'Graves', 'Your items wait in a grave where you died instead of despawning.'],
  ['data', 'gameplay', ['Multiplayer'], 'Player Head Drops', 'Players drop their heads when killed by another player.'],
  ['data', 'gameplay', ['Multiplayer'], 'Coordinates HUD', 'Shows your coordinates and facing above the hotbar.'],
  ['data', 'gameplay', ['Survival'], 'Armor Statues', 'Pose armor stands with a book of buttons.'],
  ['data', 'gameplay', ['Survival'], 'Trader Announcements', 'A chat message when a wandering trader arrives near a player.'],
  ['data', 'gameplay', ['Farming'], 'Fast Leaf Decay', 'Leaves fall within seconds once the tree is cut.'],
]
for (const [kind, category, tags, name, summary] of TWEAKS) {
  add('tweakery', kind, category, tags, `Vanilla Tweaks: ${name}`, summary, { detail: 'Part of the Vanilla Tweaks series: small changes, one per pack, mix and match.' })
}

const CRAFTABLE: ReadonlyArray<[string, string]> = [
  ['Saddles', 'Saddles from leather and an iron ingot.'],
  ['Name Tags', 'Name tags from paper and string.'],
  ['Horse Armor', 'Iron, gold and diamond horse armor at the crafting table.'],
  ['Bundles', 'Bundles from rabbit hide and string, before you find any.'],
  ['Chainmail', 'Chainmail armor from iron nuggets.'],
  ['Tridents', 'A trident from prismarine shards and a heart of the sea.'],
  ['Enchanted Golden Apples', 'Notch apples again, from blocks of gold.'],
  ['Spawners', 'Spawners from iron bars and a nether star; the mob is set with its egg.'],
  ['Elytra', 'Elytra from phantom membranes, for servers without an End city nearby.'],
  ['Coral Blocks', 'Coral blocks from their coral fans, so reefs can be rebuilt.'],
  ['Gravel', 'Gravel from cobblestone on a stonecutter.'],
  ['Sponges', 'Sponges from wool and yellow dye.'],
]
for (const [item, summary] of CRAFTABLE) {
  add('tweakery', 'data', 'gameplay', ['Recipes'], `Craftable ${item}`, summary, { detail: 'A recipe only: nothing else about the item changes, and the recipe book shows it.' })
}

// ------------------------------------------------------------------ written out: interface and fonts

add('quartzquill', 'resource', 'ui', ['Tooltips', 'Enchantments'], 'Enchantment Descriptions', 'Tooltips that explain what each enchantment does and what it works on.', {
  bullets: ['Every enchantment, including the curses', 'Translated into twelve languages'],
})
add('quartzquill', 'resource', 'ui', ['Tooltips'], 'Shulker Box Tooltip', 'See what is inside a shulker box by hovering over it.')
add('quartzquill', 'resource', 'ui', ['HUD'], 'Thin Block Outline', 'A one pixel block outline instead of the thick black one.')
add('quartzquill', 'resource', 'ui', ['HUD', 'Combat'], 'Armor Durability HUD', 'Your armor\'s wear as small bars next to the hotbar.')
add('quartzquill', 'resource', 'ui', ['Fonts', 'Medieval'], 'Runic Font', 'All the game\'s text in carved runes, still readable.')
add('quartzquill', 'resource', 'ui', ['Fonts'], 'Handwritten Font', 'Text as if written with a quill in a journal.')
add('quartzquill', 'resource', 'ui', ['Fonts', 'Accessibility'], 'Dyslexia Friendly Font', 'A font with weighted letter bottoms that many readers find easier.')
add('quartzquill', 'resource', 'ui', ['Fonts', 'Sci-Fi'], 'Terminal Font', 'Green monospace text like an old computer screen.')
add('quartzquill', 'resource', 'ui', ['GUI', 'Dark'], 'Midnight GUI', 'Every menu and inventory in dark grey, easy on the eyes at night.')
add('quartzquill', 'resource', 'ui', ['GUI', 'Pastel'], 'Bubblegum GUI', 'Pink and lilac menus with rounded corners.')
add('quartzquill', 'resource', 'ui', ['Menus'], 'Panorama Pack', 'Twelve new title screen panoramas from famous builds.')
add('quartzquill', 'resource', 'ui', ['Menus', 'Building'], 'Hanging Signs Plus', 'Hanging signs with more room for text and a carved border for each wood.', { team: ['lanternjack'] })
add('quartzquill', 'resource', 'ui', ['Tooltips', 'Music'], 'Jukebox Now Playing', 'A toast with the song title whenever a jukebox starts a record.')
add('quartzquill', 'resource', 'ui', ['HUD'], 'Compact Chat', 'Smaller chat text with timestamps, for busy servers.')
add('quartzquill', 'resource', 'ui', ['HUD', 'Minimalist'], 'Minimal Crosshair', 'A small dot instead of the cross in the middle of the screen.')
add('quartzquill', 'resource', 'ui', ['Tooltips'], 'Map Tooltips', 'See a map\'s contents in its tooltip.')
add('quartzquill', 'resource', 'ui', ['Tooltips', 'Cooking'], 'Food Tooltips', 'Hunger and saturation shown on every food item.')

// ------------------------------------------------------------------ written out: sounds and music

add('tidecaller', 'resource', 'audio', ['Music'], 'Lofi Music Discs', 'Replaces every record with custom lofi tracks to build to.', {
  bullets: ['Thirteen tracks, one per disc', 'Same lengths as the originals, so redstone jukebox loops still work'],
})
add('tidecaller', 'resource', 'audio', ['Ambience', 'Biomes'], 'Desert Winds', 'Howling desert wind and the odd rolling tumbleweed.')
add('tidecaller', 'resource', 'audio', ['Ambience', 'Oceans'], 'Ocean Waves', 'Waves breaking on the shore whenever you are near a beach.')
add('tidecaller', 'resource', 'audio', ['Ambience', 'Nether'], 'Nether Ambience Remastered', 'Deeper, stranger sounds for every nether biome.')
add('tidecaller', 'resource', 'audio', ['Sound Effects'], 'Softer Footsteps', 'Footsteps that are quieter on carpet and wool.')
add('tidecaller', 'resource', 'audio', ['Music', 'Ambience'], 'Rainy Day Lofi', 'Calm piano that plays only while it rains.')
add('tidecaller', 'resource', 'audio', ['Sound Effects', 'Combat'], 'Crunchy Combat Sounds', 'Weightier sword hits, shield blocks and arrow impacts.')
add('tidecaller', 'resource', 'audio', ['Music'], 'Orchestral Soundtrack', 'The game\'s music rearranged for a full orchestra.')
add('tidecaller', 'resource', 'audio', ['Sound Effects'], 'Classic Oof', 'Brings back the old hurt sound.')
add('tidecaller', 'resource', 'audio', ['Ambience', 'Caves'], 'Dripstone Echoes', 'Water drips and echoes in dripstone caves.')
add('nightjar', 'resource', 'audio', ['Ambience', 'Biomes'], 'Owl Calls', 'Owls hooting from the trees in dark forests at night.')
add('tidecaller', 'resource', 'audio', ['Sound Effects', 'Accessibility'], 'Distinct Note Blocks', 'Note block instruments that are easier to tell apart.')
add('tidecaller', 'resource', 'audio', ['Ambience'], 'Forest Birdsong', 'Birds singing in forests by day, different in every biome.')
add('tidecaller', 'data', 'gameplay', ['Exploration', 'Oceans'], 'Message in a Bottle', 'Bottles wash up on beaches with notes and treasure maps.')
add('tidecaller', 'data', 'decoration', ['Oceans', 'Building'], 'Reef Aquariums', 'Glass tanks for tropical fish and axolotls, with living coral.', {
  bullets: ['Tanks in three sizes', 'Fish keep swimming after you leave'],
})

// ------------------------------------------------------------------ written out: world generation

add('deepslate_dan', 'data', 'worldgen', ['Caves', 'Terrain'], 'Deeper Caves', 'Caves that reach further down, with bigger caverns below the deepslate.')
add('deepslate_dan', 'data', 'worldgen', ['Terrain', 'Biomes'], 'Giant Mushroom Forests', 'A new biome of towering red and brown mushrooms.')
add('deepslate_dan', 'data', 'worldgen', ['Biomes'], 'Mangrove Swamp Overhaul', 'Denser roots, muddy pools and fireflies in mangrove swamps.', { team: ['hollowbark'] })
add('deepslate_dan', 'data', 'worldgen', ['Terrain'], 'Taller Mountains', 'Peaks up to the build limit with gentler foothills.')
add('deepslate_dan', 'data', 'worldgen', ['Oceans', 'Biomes'], 'Coral Reef Biomes', 'Wider warm oceans with coral reefs in every color.')
add('deepslate_dan', 'data', 'worldgen', ['The End', 'Biomes'], 'End Reborn', 'New islands, forests and ruins in the outer End, for long after the dragon falls.')
add('deepslate_dan', 'data', 'worldgen', ['Nether', 'Biomes'], 'Nether Biomes Plus', 'Five new nether biomes, from ash dunes to crystal caverns.')
add('deepslate_dan', 'data', 'worldgen', ['Terrain', 'Loot'], 'Ore Veins Expanded', 'Longer and richer ore veins, marked by surface boulders.')
add('deepslate_dan', 'data', 'worldgen', ['Terrain'], 'Floating Islands', 'Grassy islands hanging in the sky above the plains.')
add('deepslate_dan', 'data', 'worldgen', ['Terrain', 'Biomes'], 'Winding Rivers', 'Longer rivers that wind through valleys and end in deltas.')
add('deepslate_dan', 'data', 'worldgen', ['Biomes', 'Terrain'], 'Autumn Forests', 'Orange, red and yellow forests with fallen leaves and foxes.', { team: ['hollowbark'] })
add('deepslate_dan', 'data', 'worldgen', ['Caves'], 'Crystal Geodes', 'Amethyst geodes ten times bigger, with crystals of every color.')
add('deepslate_dan', 'data', 'worldgen', ['Caves'], 'Lush Caves Expanded', 'Bigger lush caves with glow berries, moss and hidden pools.')
add('deepslate_dan', 'data', 'worldgen', ['Terrain', 'Skyblock'], 'Void World Generator', 'An empty world of air, for builders and skyblock maps.')
add('mossy_mage', 'data', 'worldgen', ['Biomes', 'Magic'], 'Enchanted Groves', 'Glowing trees and floating spores in a rare magic biome.')

// ------------------------------------------------------------------ written out: structures

add('emberfox', 'data', 'structures', ['Dungeons', 'Bosses'], 'Dragon Lairs', 'Caverns guarded by sleeping beasts, piled high with treasure.', {
  bullets: ['Three lair sizes', 'A boss fight at the heart of each', 'Loot scaled by depth'],
})
add('emberfox', 'data', 'structures', ['Villages', 'Building'], 'Cozy Villages', 'Villages with gardens, market stalls and warm lit houses in every biome.', {
  bullets: ['New houses for every villager job', 'Paths lined with lanterns'],
})
add('emberfox', 'data', 'structures', ['Nether', 'Dungeons'], 'Nether Fortresses Reforged', 'Bigger fortresses with halls, bridges and blaze chambers.')
add('emberfox', 'data', 'structures', ['Villages', 'Towers'], 'Village Walls', 'Walls, gates and guard towers around larger villages.')
add('emberfox', 'data', 'structures', ['Exploration', 'Loot'], 'Archaeology Expanded', 'Suspicious sand and gravel at twenty new dig sites.', {
  detail: 'Bring a brush: pottery sherds, old tools, a few rare trims and even a sniffer egg are waiting.',
})
add('emberfox', 'data', 'structures', ['Dungeons', 'Loot'], 'Sunken Temples', 'Flooded temples under the ocean, with trapped corridors.')
add('emberfox', 'data', 'structures', ['Towers', 'Magic'], 'Wizard Towers', 'Tall towers with libraries, alchemy labs and a wizard who trades spells.')
add('emberfox', 'data', 'structures', ['Building', 'Exploration'], 'Woodland Mansion Remix', 'Five new mansion layouts with secret rooms.', { team: ['hollowbark'] })
add('emberfox', 'data', 'structures', ['Dungeons', 'Loot'], 'Sealed Vaults', 'Vaults sealed deep in ancient cities, opened with trial keys.')
add('emberfox', 'data', 'structures', ['Dungeons'], 'Catacombs', 'Winding catacombs below graveyards and churches.')
add('emberfox', 'data', 'structures', ['Ruins', 'Oceans'], 'Shipwrecks Plus', 'Shipwrecks of every size, some still floating.')

// ------------------------------------------------------------------ written out: mobs and creatures

add('mossy_mage', 'resource', 'mobs', ['Mobs', 'Cartoon'], 'Rainbow Sheep', 'Sheep that slowly cycle through every dye color.', {
  detail: 'Works like naming a sheep jeb_, for every sheep in the world.',
})
add('mossy_mage', 'data', 'mobs', ['Farming', 'Pets'], 'Busy Bees', 'Bees that pollinate more crops and make three kinds of honey.', { team: ['cobble_cat'] })
add('mossy_mage', 'data', 'mobs', ['Pets'], 'Cat Collars', 'Give your cat a collar with a bell and a name plate.', { team: ['cobble_cat'] })
add('mossy_mage', 'data', 'mobs', ['Bosses', 'Combat'], 'Wither Rework', 'A three phase Wither fight with new attacks.')
add('deepslate_dan', 'data', 'mobs', ['Horror', 'Caves', 'Ambience'], 'Cave Whispers', 'Something follows you in the deep dark, and only its whispers give it away.')
add('mossy_mage', 'data', 'mobs', ['Horror', 'Mobs'], 'Stalker Endermen', 'Endermen that watch you from afar and vanish when looked at.')
add('mossy_mage', 'data', 'mobs', ['Bosses', 'Combat'], 'Illager Warlord', 'A boss who leads the last wave of every raid.')
add('mossy_mage', 'data', 'mobs', ['Pets'], 'Tamable Foxes', 'Feed a fox sweet berries to make it follow you.')
add('mossy_mage', 'data', 'mobs', ['Mobs', 'Exploration'], 'Wandering Trader Overhaul', 'The trader brings rare saplings, maps and seasonal goods.')
add('mossy_mage', 'data', 'mobs', ['Mobs'], 'More Mob Heads', 'Every mob drops its head, rarely, when killed by a player.')
add('mossy_mage', 'data', 'mobs', ['Pets', 'Survival'], 'Loyal Wolves', 'Tamed wolves teleport to you less and fight smarter.')

// ------------------------------------------------------------------ written out: gameplay

add('glimmerwick', 'data', 'gameplay', ['Farming', 'Exploration'], 'Ancient Seeds', 'Sniffers dig up twelve forgotten flowers and crops.', {
  bullets: ['Each seed grows only in its own biome', 'New dyes from the flowers'],
})
add('glimmerwick', 'data', 'gameplay', ['Challenge', 'Survival'], 'More Advancements', 'Over a hundred new advancements, from first steps to lifelong goals.', {
  bullets: ['Each with its own icon and a reward', 'Tabs for farming, building and exploring'],
})
add('redstone_rose', 'data', 'gameplay', ['Survival'], 'Villager Trade Rebalance', 'Fairer prices that rise with demand and fall over time.', {
  detail: 'Librarians no longer sell every book on day one.',
})
add('mossy_mage', 'data', 'gameplay', ['Magic', 'Combat'], 'Spellbooks', 'Cast fireballs, blinks and wards from books you write.')
add('mossy_mage', 'data', 'gameplay', ['Magic'], 'Alchemy Cauldrons', 'Brew potions in cauldrons by dropping in ingredients.')
add('glimmerwick', 'data', 'gameplay', ['Cooking', 'Farming'], 'Mushroom Stew Variety', 'Twelve stews from the mushrooms and vegetables you grow.')
add('mossy_mage', 'data', 'gameplay', ['Hardcore', 'Survival'], 'Thirst', 'Drink water or grow weak; boil it first to be safe.')
add('mossy_mage', 'data', 'gameplay', ['Hardcore'], 'Realistic Fall Damage', 'Broken legs slow you down after long falls.')
add('redstone_rose', 'data', 'gameplay', ['Enchantments'], 'Enchanting Table Plus', 'Pick the enchantment you want at a higher level cost.')
add('mossy_mage', 'data', 'gameplay', ['Loot', 'Exploration'], 'Treasure Maps Everywhere', 'Maps to buried treasure in every chest loot table.')
add('mossy_mage', 'data', 'gameplay', ['Cooking'], 'Campfire Cooking', 'Cook on campfires in pots and pans for better meals.')
add('tweakery', 'data', 'gameplay', ['Combat'], 'Dual Wielding', 'Attack with the item in your off hand too.')
add('tweakery', 'data', 'gameplay', ['Survival', 'Farming'], 'Seasons', 'Spring, summer, autumn and winter change crops and snow.')
add('tweakery', 'data', 'gameplay', ['Exploration'], 'Elytra Trails', 'Colored smoke trails behind you while gliding.', {
  detail: 'Earn new colors by flying through the rings after the dragon fight.',
})
add('mossy_mage', 'data', 'gameplay', ['Loot', 'Combat'], 'More Armor Trims', 'Sixteen new smithing templates found in ruins and camps.')
add('tweakery', 'data', 'decoration', ['Building'], 'More Bookshelves', 'Bookshelves in every wood type, with matching chiseled shelves.')
add('tweakery', 'data', 'decoration', ['Building'], 'More Banner Patterns', 'Forty banner patterns from the loom.')

// ------------------------------------------------------------------ written out: redstone and technical

add('redstone_rose', 'data', 'qol', ['Redstone', 'Quality of Life'], 'Hopper Counter Display', 'Shows how many items per hour pass through a hopper.')
add('redstone_rose', 'data', 'technical', ['Redstone', 'Automation'], 'Hopper Sorter', 'Sorting chests that take any item by its tag.')
add('redstone_rose', 'data', 'technical', ['Redstone', 'Automation'], 'Cobblestone Generators Plus', 'Cobblestone generators that also yield andesite and tuff.', { team: ['cobble_cat'] })
add('redstone_rose', 'data', 'technical', ['Redstone'], 'Compact Redstone Contraptions', 'Pistons, repeaters and comparators in one block each.')
add('redstone_rose', 'data', 'technical', ['Redstone', 'Debug'], 'Redstone Signal Viewer', 'See the signal strength of every wire you look at.')
add('redstone_rose', 'data', 'technical', ['Automation', 'Farming'], 'Honey Farm Automation', 'Dispensers collect honey and combs when hives are full of bees.')
add('redstone_rose', 'data', 'technical', ['Automation'], 'Shulker Shell Farm Helper', 'Makes shulkers duplicate reliably in farms.')
add('redstone_rose', 'data', 'technical', ['Debug'], 'Chunk Border Lines', 'Particles along chunk borders when you sneak with a compass.')
add('redstone_rose', 'data', 'technical', ['Automation'], 'Item Elevators', 'Move items straight up through a column of one block.')
add('redstone_rose', 'data', 'technical', ['Redstone'], 'Wireless Redstone', 'Linked transmitters and receivers, tuned by dye color.')
add('redstone_rose', 'resource', 'technical', ['Redstone', 'Debug'], 'Redstone Power Levels', 'Numbers on redstone dust showing its signal strength.')
add('redstone_rose', 'data', 'technical', ['Automation'], 'Auto Crafter Recipes', 'Crafter recipes for common builds, loaded in one click.')
add('redstone_rose', 'data', 'qol', ['Quality of Life'], 'Light Level Overlay', 'Marks blocks where mobs can spawn.')
add('redstone_rose', 'data', 'qol', ['Quality of Life'], 'Inventory Sorting', 'Sort any chest by double clicking an empty slot.')
add('redstone_rose', 'data', 'qol', ['Quality of Life', 'Multiplayer'], 'AFK Display', 'Shows who is away in the player list.')
add('redstone_rose', 'data', 'technical', ['Redstone'], 'Clockwork Doors', 'Piston doors in one block, in a steampunk style.')
add('redstone_rose', 'data', 'technical', ['Debug', 'Automation'], 'Mob Farm Rates', 'Reports how many drops per hour your farm makes.')

// ------------------------------------------------------------------ written out: decoration and challenges

add('emberfox', 'data', 'decoration', ['Lighting', 'Building'], 'Paper Lanterns', 'Paper lanterns in every color to hang from fences and ceilings.', { invited: ['lanternjack'] })
add('emberfox', 'data', 'decoration', ['Furniture', 'Building'], 'Furniture Workshop', 'Chairs, tables and shelves for a cozy reading nook.')
add('emberfox', 'data', 'decoration', ['Building'], 'Stained Glass Windows', 'Leaded glass windows with flowers, suns and knights.')
add('emberfox', 'data', 'decoration', ['Building', 'Medieval'], 'Castle Builder Kit', 'Battlements, arrow slits and portcullises.')
add('tidecaller', 'data', 'decoration', ['Oceans', 'Lighting'], 'Sea Lantern Variants', 'Sea lanterns in six colors and two shapes.')
add('glimmerwick', 'data', 'decoration', ['Building'], 'Garden Paths', 'Stepping stones and gravel paths that follow slopes.')
add('tweakery', 'data', 'challenges', ['Skyblock', 'Challenge'], 'Skyblock Islands', 'Start on a tiny island in the void with its own advancements.')
add('tweakery', 'data', 'challenges', ['Skyblock', 'Challenge'], 'One Block Challenge', 'A single block that turns into whatever you need next.')
add('tweakery', 'data', 'challenges', ['Hardcore', 'Challenge'], 'Hardcore Hearts', 'Start with one heart and earn more.')
add('tweakery', 'data', 'challenges', ['Minigames', 'Multiplayer'], 'Hide and Seek', 'A minigame for any map: seekers, hiders and a timer.')
add('tweakery', 'data', 'challenges', ['Minigames', 'Multiplayer'], 'Spleef Arena', 'A ready to play spleef arena with scoreboards.')
add('tweakery', 'data', 'challenges', ['Challenge'], 'Random Item Every Minute', 'Every player gets a random item each minute.')

export const PACKS: readonly CorpusPack[] = packs

/** namespace:pack_id as the site makes them (the namespace is the owner's lower-case name, the id the title's slug). */
export function corpusId(pack: Pick<CorpusPack, 'owner' | 'title'>): string {
  return `${pack.owner.toLowerCase()}:${slugify(pack.title)}`
}

const id = (owner: string, title: string) => corpusId({ owner, title })

export const QUERIES: readonly CorpusQuery[] = [
  // The title's words, as written.
  { query: 'dragon lairs', expect: id('emberfox', 'Dragon Lairs'), why: 'both words of the title; "dragon" also in two other packs\' texts' },
  { query: 'better ores outline', expect: id('pixelsmith', 'Better Ores Outline'), why: 'the whole title, among other "Better ..." packs and ore packs' },
  { query: 'faithful 32x', expect: id('pixelsmith', 'Faithful 32x'), why: 'the resolution tells it from Faithful 64x' },
  { query: 'cozy villages', expect: id('emberfox', 'Cozy Villages'), why: 'the title; "cozy" and "village" are elsewhere too' },
  { query: 'shorter grass', expect: id('tweakery', 'Vanilla Tweaks: Shorter Grass'), why: 'the tweak\'s name; Better Grass shares a word' },
  { query: 'enchantment descriptions', expect: id('quartzquill', 'Enchantment Descriptions'), why: 'the title; enchantment is in several titles and tags' },
  { query: 'nether fortress', expect: id('emberfox', 'Nether Fortresses Reforged'), why: 'a prefix of the plural, among many nether packs' },
  { query: 'glowing ores', expect: id('pixelsmith', 'Glowing Ores'), why: 'the title, beside Glowing Mob Eyes and many ore packs' },
  // A word that only the summary has.
  { query: 'sniffer', expect: id('glimmerwick', 'Ancient Seeds'), why: 'only its summary mentions sniffers' },
  { query: 'axolotl', expect: id('tidecaller', 'Reef Aquariums'), why: 'only its summary mentions axolotls' },
  { query: 'tumbleweed', expect: id('tidecaller', 'Desert Winds'), why: 'only its summary mentions a tumbleweed' },
  // A word only the description has.
  { query: 'jeb', expect: id('mossy_mage', 'Rainbow Sheep'), why: 'the jeb_ sheep easter egg, named in its description only' },
  { query: 'optifine', expect: id('pixelsmith', 'Connected Glass'), why: 'its description says no OptiFine is needed' },
  // A tag.
  { query: 'horror', expect: id('deepslate_dan', 'Cave Whispers'), why: 'tagged Horror (with one other pack); another pack\'s description says it is not horror' },
  { query: 'steampunk', expect: id('pixelsmith', 'Brass & Gears'), why: 'the only pack tagged Steampunk; Clockwork Doors mentions it in its summary' },
  { query: 'emissive ores', expect: id('pixelsmith', 'Glowing Ores'), why: 'tag Emissive and a title word' },
  { query: 'fonts medieval', expect: id('quartzquill', 'Runic Font'), why: 'two tags: Fonts and Medieval' },
  // A category.
  { query: 'qol hopper', expect: id('redstone_rose', 'Hopper Counter Display'), why: 'the category key qol; Hopper Sorter is in another category' },
  { query: 'decoration lanterns', expect: id('emberfox', 'Paper Lanterns'), why: 'category Decoration, unlike Better Lanterns (Textures)' },
  { query: 'worldgen mushroom', expect: id('deepslate_dan', 'Giant Mushroom Forests'), why: 'category key worldgen; Mushroom Stew Variety is gameplay' },
  { query: 'world generation islands', expect: id('deepslate_dan', 'Floating Islands'), why: 'the category\'s name; Skyblock Islands is a challenge' },
  // An owner's name.
  { query: 'nightjar', expect: id('nightjar', 'Owl Calls'), why: 'the owner of one pack' },
  { query: 'emberfox desert', expect: id('emberfox', 'Desert Wells'), why: 'emberfox\'s only desert pack among several desert packs' },
  { query: 'pixelsmith armor', expect: id('pixelsmith', 'Retro Armor'), why: 'pixelsmith\'s only armor pack; others made armor packs too' },
  { query: 'tidecaller coral', expect: id('tidecaller', 'Reef Aquariums'), why: 'tidecaller\'s coral pack, not deepslate_dan\'s Coral Reef Biomes' },
  // A team member's name.
  { query: 'lanternjack', expect: id('quartzquill', 'Hanging Signs Plus'), why: 'a co-author of this pack (only invited, not yet a member, of Paper Lanterns)' },
  { query: 'cobble_cat bees', expect: id('mossy_mage', 'Busy Bees'), why: 'cobble_cat is in three teams; bees narrows it' },
  { query: 'hollowbark mangrove', expect: id('deepslate_dan', 'Mangrove Swamp Overhaul'), why: 'hollowbark\'s mangrove pack, among swamp packs mentioning mangroves' },
  // Prefixes, as one types.
  { query: 'drag', expect: id('emberfox', 'Dragon Lairs'), why: 'the only title starting with "drag"' },
  { query: 'cozy vill', expect: id('emberfox', 'Cozy Villages'), why: 'half typed' },
  { query: 'shulk', expect: id('quartzquill', 'Shulker Box Tooltip'), why: 'one of two shulker titles' },
  { query: 'enchantment desc', expect: id('quartzquill', 'Enchantment Descriptions'), why: 'the second word half typed' },
  { query: 'archae', expect: id('emberfox', 'Archaeology Expanded'), why: 'half of a long word' },
  { query: 'wandering tr', expect: id('mossy_mage', 'Wandering Trader Overhaul'), why: 'two letters into the second word' },
  // Typing mistakes within the budget: one edit from 5 letters, two from 9.
  { query: 'dargon lairs', expect: id('emberfox', 'Dragon Lairs'), why: 'two letters swapped' },
  { query: 'cozy vilages', expect: id('emberfox', 'Cozy Villages'), why: 'a letter left out' },
  { query: 'better ores outlnie', expect: id('pixelsmith', 'Better Ores Outline'), why: 'two letters swapped at the end' },
  { query: 'encahntmint descriptions', expect: id('quartzquill', 'Enchantment Descriptions'), why: 'two mistakes in an eleven letter word' },
  { query: 'archeology', expect: id('emberfox', 'Archaeology Expanded'), why: 'the American spelling: one letter fewer' },
  { query: 'more advancments', expect: id('glimmerwick', 'More Advancements'), why: 'a letter left out; "more" starts many titles' },
  { query: 'kontrapsions', expect: id('redstone_rose', 'Compact Redstone Contraptions'), why: 'spelled by ear: two letters wrong in a twelve letter word' },
  { query: 'netherrite tools', expect: id('pixelsmith', 'Netherite Tools Remastered'), why: 'a letter doubled; tool packs mention netherite in their summaries' },
  { query: 'skyblok', expect: id('tweakery', 'Skyblock Islands'), why: 'a letter left out; other packs are tagged Skyblock' },
  { query: 'wandering trder', expect: id('mossy_mage', 'Wandering Trader Overhaul'), why: 'a letter left out of a five letter word' },
  // Several words.
  { query: 'quiet rain', expect: id('tweakery', 'Vanilla Tweaks: Quieter Rain'), why: 'a prefix of "quieter"; Rainy Day Lofi and Quieter Portals share a word each' },
  { query: 'sheep colors', expect: id('mossy_mage', 'Rainbow Sheep'), why: 'title word and summary word; wool packs list colors' },
  { query: 'custom music discs', expect: id('tidecaller', 'Lofi Music Discs'), why: '"custom" is in its summary' },
  { query: 'villager trades', expect: id('redstone_rose', 'Villager Trade Rebalance'), why: 'trade, not trades: one letter more' },
  { query: 'low fire', expect: id('tweakery', 'Vanilla Tweaks: Lower Fire'), why: 'a prefix of "lower"' },
  { query: 'sleep vote multiplayer', expect: id('tweakery', 'Vanilla Tweaks: Sleep Vote'), why: 'the title and a tag' },
  // One word in one title and in other packs' lesser fields: the title wins.
  { query: 'bees', expect: id('mossy_mage', 'Busy Bees'), why: 'the title; Honey Farm Automation\'s summary mentions bees' },
  { query: 'castle', expect: id('emberfox', 'Castle Builder Kit'), why: 'the title; six Rustic packs\' descriptions mention castle builds' },
  { query: 'fox', expect: id('mossy_mage', 'Tamable Foxes'), why: 'the title; Autumn Forests\' summary has foxes (and emberfox is no prefix match)' },
  { query: 'trident', expect: id('tweakery', 'Craftable Tridents'), why: 'the title; Smarter Drowned\'s summary has tridents' },
  { query: 'gravel', expect: id('tweakery', 'Craftable Gravel'), why: 'the title; two summaries mention gravel' },
  { query: 'honey', expect: id('redstone_rose', 'Honey Farm Automation'), why: 'the title; Busy Bees and Slime Variants mention honey' },
  { query: 'hardcore', expect: id('tweakery', 'Hardcore Hearts'), why: 'the title and the tag; two more packs have only the tag' },
  { query: 'connected glass', expect: id('pixelsmith', 'Connected Glass'), why: 'both title words; Borderless Glass has the tag Connected Textures' },
  { query: 'redstone signal', expect: id('redstone_rose', 'Redstone Signal Viewer'), why: 'both title words; Redstone Power Levels has them in title and summary' },
  // A common word must not drown a rare one.
  { query: 'minecraft sniffer pack', expect: id('glimmerwick', 'Ancient Seeds'), why: '"minecraft" and "pack" are in every description' },
  { query: 'hopper counter pack', expect: id('redstone_rose', 'Hopper Counter Display'), why: '"pack" is everywhere, "counter" in one title' },
  { query: 'resource pack tumbleweed', expect: id('tidecaller', 'Desert Winds'), why: '"resource" prefixes every resource pack\'s install line' },
  { query: 'the owl pack', expect: id('nightjar', 'Owl Calls'), why: '"the" and "pack" are in nearly every pack' },
]

/** Identifies the corpus: results are compared across combinations only when both seeded the same packs and asked the same queries. */
export function corpusHash(): string {
  return createHash('sha256').update(JSON.stringify({ CATEGORIES, TAGS, OWNERS, MEMBERS, packs, QUERIES })).digest('hex').slice(0, 16)
}

/** A pack's archive, unique to it (its title in pack.mcmeta and a file named after it), of the pack's kind. */
export function corpusArchive(pack: CorpusPack): Promise<Buffer> {
  const slug = slugify(pack.title)
  const meta = (format: number) => JSON.stringify({ pack: { pack_format: format, description: pack.title } })
  if (pack.kind === 'resource') {
    return zip({ 'pack.mcmeta': meta(34), 'pack.png': png(), [`assets/minecraft/textures/block/${slug.replace(/-/g, '_')}.png`]: png(2, 2) })
  }
  const ns = slug.replace(/-/g, '_')
  return zip({ 'pack.mcmeta': meta(48), [`data/${ns}/function/load.mcfunction`]: `tellraw @a "${pack.title} loaded"`, 'data/minecraft/tags/function/load.json': JSON.stringify({ values: [`${ns}:load`] }) })
}

export interface SeededCorpus {
  users: Map<string, TestUser>
  /** By corpusId. */
  packs: Map<string, PackJson>
  /** How long publishing took, in milliseconds (users, tags and categories included). */
  millis: number
}

/**
 * Makes the categories and tags (as the admin CLI does), the users, and publishes every pack through the
 * API, `concurrency` at a time; co-authors the draft names accept their invitations.
 */
export async function seedCorpus(site: TestSite, options: { concurrency?: number } = {}): Promise<SeededCorpus> {
  const started = performance.now()
  for (const category of CATEGORIES) await createCategory(site.app.db, category.key, category.name, category.color)
  for (const [tag, category] of Object.entries(TAGS)) await createTag(site.app.db, tag, category)
  const users = new Map<string, TestUser>()
  for (const name of [...OWNERS, ...MEMBERS]) users.set(name, await site.user(name))
  const archives = await Promise.all(PACKS.map(corpusArchive))
  const published = new Map<string, PackJson>()
  let next = 0
  const worker = async () => {
    while (next < PACKS.length) {
      const index = next++
      const pack = PACKS[index]!
      const owner = users.get(pack.owner)!
      const draft = randomUUID()
      await saveDraft(site, owner, draft, {
        title: pack.title, summary: pack.summary, description: pack.description, tags: pack.tags, category: pack.category, version_name: '1.0.0',
        team: [...pack.team, ...pack.invited].map((username) => ({ username, role: 'uploader' })),
      })
      await upload(site, owner, 'version', archives[index]!, { draft, filename: `${slugify(pack.title)}.zip` })
      const res = await site.app.inject({ method: 'POST', url: '/api/draft/publish/', headers: owner.headers, payload: { draft } })
      assert.equal(res.statusCode, 201, `${pack.title}: ${res.body}`)
      const json = res.json() as PackJson
      assert.equal(json.id, corpusId(pack))
      assert.equal(json.tags.length, pack.tags.length, `${pack.title}: every tag is one of the site's`)
      for (const member of pack.team) {
        const accept = await site.app.inject({ method: 'POST', url: `/api/packs/${json.namespace}/${json.pack_id}/team/accept/`, headers: users.get(member)!.headers })
        assert.equal(accept.statusCode, 200, `${member} joins ${json.id}: ${accept.body}`)
      }
      published.set(json.id, json)
    }
  }
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker))
  return { users, packs: published, millis: performance.now() - started }
}
