import { USERNAME_PATTERN } from '../api/constants.js'
import { BadRequest } from '../errors.js'

/** CONTRACT §1: 1-32 characters of [A-Za-z0-9_.-], unique case-insensitively (the unique index sees to that). */
export function validateUsername(username: string): string {
  if (!USERNAME_PATTERN.test(username)) {
    throw new BadRequest('username must be 1-32 characters of letters, digits, "_", "." or "-"')
  }
  return username
}

/** The pack namespace of a user: their username in lower case (CONTRACT §5). */
export function namespaceOf(username: string): string {
  return username.toLowerCase()
}
