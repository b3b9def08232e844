// Hearing about updates through the API (docs/notifications.md): following packs, the notifications the site
// keeps for each user, and the feed token that opens a user's Atom feeds.
import { Type, type Static } from 'typebox'
import type { Literals } from './common.js'

const DateTime = Type.String({ format: 'date-time' })

/** What a notification is about. */
export const NOTIFICATION_KINDS = ['version.published', 'pack.hidden', 'pack.shown', 'version.yanked', 'team.invited', 'webhook.disabled'] as const
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number]

/** Notifications a user keeps at most; a new one past this drops their oldest. */
export const NOTIFICATIONS_KEPT = 100

export const NotificationPack = Type.Object({
  namespace: Type.String(),
  pack_id: Type.String(),
  title: Type.String(),
}, { title: 'NotificationPack' })

export const Notification = Type.Object({
  id: Type.String(),
  kind: Type.Union(NOTIFICATION_KINDS.map((k) => Type.Literal(k)) as Literals<typeof NOTIFICATION_KINDS>, {
    description: 'version.published: a pack you follow has a new version; pack.hidden / pack.shown: staff hid your pack or showed '
      + 'it again (with their reason); version.yanked: staff yanked a version of your pack; team.invited: you were invited into '
      + 'a pack\'s team; webhook.disabled: one of your pack\'s webhooks was switched off after failing for a day.',
  }),
  created_at: DateTime,
  read_at: Type.Union([DateTime, Type.Null()], { description: 'null while unread.' }),
  text: Type.String({ description: 'The notice as one sentence, as the notifications page shows it.' }),
  link: Type.String({ description: 'Where it leads on this site (a path).' }),
  pack: Type.Union([NotificationPack, Type.Null()]),
  version: Type.Union([Type.String(), Type.Null()], { description: 'The version\'s name, for version notices.' }),
  reason: Type.Union([Type.String(), Type.Null()], { description: 'Staff\'s reason, for moderation notices; the webhook\'s last error for webhook.disabled.' }),
}, { title: 'Notification' })
export type NotificationBody = Static<typeof Notification>

export const NotificationList = Type.Object({
  items: Type.Array(Notification, { description: 'Newest first.' }),
  unread: Type.Integer({ minimum: 0, description: 'How many of all your notifications are unread.' }),
  total: Type.Integer({ minimum: 0, description: `How many you have (at most ${NOTIFICATIONS_KEPT}: past that the oldest go).` }),
}, { title: 'NotificationList' })
export type NotificationListBody = Static<typeof NotificationList>

export const NotificationQuery = Type.Object({
  unread: Type.Optional(Type.Boolean({ description: 'true: unread ones only.' })),
  limit: Type.Integer({ minimum: 1, maximum: NOTIFICATIONS_KEPT, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: NOTIFICATIONS_KEPT, default: 0 }),
}, { additionalProperties: false })

export const NotificationParams = Type.Object({
  // A notice to a pack's followers is named by its event and its follower (two UUIDs and a colon, 73 characters).
  notification_id: Type.String({ maxLength: 100, description: 'The notification\'s id, as GET /api/notifications/ gives it.' }),
})

export const Follow = Type.Object({
  following: Type.Boolean({ description: 'Whether the caller follows the pack now.' }),
  followers: Type.Integer({ minimum: 0, description: 'How many people follow it.' }),
}, { title: 'Follow' })
export type FollowBody = Static<typeof Follow>

export const FollowedPack = Type.Object({
  namespace: Type.String(),
  pack_id: Type.String(),
  title: Type.String(),
  followed_at: DateTime,
}, { title: 'FollowedPack' })

export const FollowList = Type.Object({
  items: Type.Array(FollowedPack, { description: 'Newest follow first.' }),
  total: Type.Integer({ minimum: 0 }),
}, { title: 'FollowList' })
export type FollowListBody = Static<typeof FollowList>

export const FollowListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
  offset: Type.Integer({ minimum: 0, maximum: 100_000, default: 0 }),
}, { additionalProperties: false })

/** The query parameter a feed URL carries its token in (feed readers send no headers). */
export const FEED_TOKEN_PARAM = 'feed_token'

export const FeedLinks = Type.Object({
  new_packs: Type.String({ description: 'Atom feed of new packs on the site.' }),
  your_packs: Type.String({ description: 'Atom feed of the versions of your packs.' }),
  pack: Type.String({ description: 'A pack\'s feed: replace {namespace} and {pack_id}.' }),
  user: Type.String({ description: 'A user\'s packs\' feed: replace {username}.' }),
}, { title: 'FeedLinks' })

export const FeedToken = Type.Object({
  token: Type.Union([Type.String(), Type.Null()], {
    description: 'pkf_ and 43 characters. null: you have none (feeds then open only in a browser past the gate), or it was sealed '
      + 'with another site secret and cannot be shown (it still works; make a new one).',
  }),
  created_at: Type.Union([DateTime, Type.Null()], { description: 'When it was made.' }),
  last_used_at: Type.Union([DateTime, Type.Null()], { description: 'When a feed was last opened with it, noted at most once a minute.' }),
  feeds: Type.Union([FeedLinks, Type.Null()], { description: 'Absolute feed addresses carrying the token; null without one.' }),
}, { title: 'FeedToken' })
export type FeedTokenBody = Static<typeof FeedToken>
