// Conditional requests, shared by the file route and the update-check.

const ENTITY_TAG = /(?:W\/)?"[^"]*"/g

/** If-None-Match uses the weak comparison: W/"x" matches "x"; "*" matches anything (RFC 9110 §13.1.2). */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  // What a client that keeps one answer sends back: the tag itself (the update-check's 304s, on every game start).
  if (header === etag) return true
  if (header.trim() === '*') return true
  return (header.match(ENTITY_TAG) ?? []).some((tag) => tag.replace(/^W\//, '') === etag)
}
