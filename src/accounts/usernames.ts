import { USERNAME_PATTERN } from '../api/constants.js'
import { BadRequest } from '../errors.js'

/** 1-32 characters of [A-Za-z0-9_.-], unique case-insensitively (the unique index sees to that): docs/decisions.md#usernames. */
export function validateUsername(username: string): string {
  if (!USERNAME_PATTERN.test(username)) {
    throw new BadRequest('username must be 1-32 characters of letters, digits, "_", "." or "-"')
  }
  return username
}

/** The pack namespace of a user: their username in lower case (docs/decisions.md#paths-and-ids). */
export function namespaceOf(username: string): string {
  return username.toLowerCase()
}
