// Constants of the API that the server, the browser client and the tests share.
// Dependency-free on purpose: the client bundle imports this file, so it must
// pull in nothing else (no TypeBox, no Node built-ins).

/** What an upload is for (docs/decisions.md#accepted-types); each kind has its own types and size limit. */
export const UPLOAD_KINDS = ['thumbnail', 'version', 'media'] as const
export type UploadKind = (typeof UPLOAD_KINDS)[number]

/** Default size limits per upload kind, in bytes (PACKS_MAX_*_SIZE override them). */
export const DEFAULT_UPLOAD_LIMITS: Readonly<Record<UploadKind, number>> = {
  thumbnail: 5 * 1024 ** 2,
  media: 100 * 1024 ** 2,
  version: 500 * 1024 ** 2,
}

/** A UUID in any case; ids in paths that do not match are 404 (a malformed id names nothing: docs/decisions.md#paths-and-ids). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value)
}

/** 1-32 characters of [A-Za-z0-9_.-], unique case-insensitively (docs/decisions.md#usernames). */
export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{1,32}$/

/** An API token's label, after trimming. */
export const TOKEN_NAME_MAX = 64
/** What an API token may do (its reach); tokens made before reaches existed are full. */
export const TOKEN_SCOPES = ['full', 'read', 'publish'] as const
export type TokenScope = (typeof TOKEN_SCOPES)[number]
/** The most packs one publish token may name. */
export const TOKEN_MAX_PACKS = 50

/** Days a deleted pack's namespace:pack_id is refused to new packs. */
export const PACK_ID_HOLD_DAYS = 30

/** The longest lifetime a token may be given, in days. */
export const TOKEN_MAX_DAYS = 3650

/** Packs per page in the listing (API default and the browse page). */
export const PACKS_PER_PAGE = 20
/** The most a client may ask for with per_page. */
export const MAX_PACKS_PER_PAGE = 100
/** Longest title search, in characters (API and browse page alike); titles are far shorter. */
export const MAX_SEARCH_LENGTH = 200

/** Autocomplete suggestions per answer. */
export const MAX_SUGGESTIONS = 20
