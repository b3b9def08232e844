// An update-check answer's HTTP Message Signature (RFC 9421), with the body's
// Content-Digest (RFC 9530): what docs/update-protocol.md ("Signatures")
// defines. A signature over the body alone proves where an answer came from,
// but not when, nor which question it answers: recorded, it could be replayed
// for ever, and /latest?game_version=… has the same body as /latest. So the
// signature covers the answer's status and body digest, the request's method,
// path and query (and, for a POST, the request's own Content-Digest when it
// sent one), and carries `created` and `expires`.
import { createHash } from 'node:crypto'

/** The signature's label in Signature-Input and Signature. */
export const SIGNATURE_LABEL = 'packs'
/** The tag that says which application's signature this is (RFC 9421 §2.3). */
export const SIGNATURE_TAG = 'packs-update'

/** The request an answer answers, as it came: the raw path and query of its request line. */
export interface AnsweredRequest {
  method: string
  /** The request target's path, as sent (no decoding). */
  path: string
  /** The query as sent, without the "?"; '' when there is none. */
  query: string
  /** The request's Content-Digest field, when it sent one that matched its body (a POST's question). */
  contentDigest?: string | undefined
}

/** `sha-256=:<base64>:`, a Content-Digest field value (RFC 9530) for these bytes. */
export function contentDigestOf(body: string | Buffer): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`
}

/** The request's raw path and query, split from its request line's target. */
export function answeredRequest(method: string, url: string, contentDigest?: string): AnsweredRequest {
  const mark = url.indexOf('?')
  return {
    method,
    path: mark === -1 ? url : url.slice(0, mark),
    query: mark === -1 ? '' : url.slice(mark + 1),
    contentDigest,
  }
}

/** The covered components and parameters, as Signature-Input carries them after `packs=`. */
export function signatureParams(request: AnsweredRequest, created: number, expires: number, keyId: string): string {
  const components = ['"@status"', '"content-digest"', '"@method";req', '"@path";req', '"@query";req']
  if (request.contentDigest !== undefined) components.push('"content-digest";req')
  return `(${components.join(' ')});created=${created};expires=${expires};keyid="${keyId}";alg="ed25519";tag="${SIGNATURE_TAG}"`
}

/** The signature base (RFC 9421 §2.5) of a 200 answer with this body digest to this request: what the key signs. */
export function signatureBase(request: AnsweredRequest, bodyDigest: string, params: string): string {
  const lines = [
    `"@status": 200`,
    `"content-digest": ${bodyDigest}`,
    `"@method";req: ${request.method}`,
    // An empty path is "/" (RFC 9421 §2.2.6); the query is "?" and the raw query, or "?" alone (§2.2.7).
    `"@path";req: ${request.path === '' ? '/' : request.path}`,
    `"@query";req: ?${request.query}`,
  ]
  if (request.contentDigest !== undefined) lines.push(`"content-digest";req: ${request.contentDigest}`)
  lines.push(`"@signature-params": ${params}`)
  return lines.join('\n')
}

/** The three response fields of a signed answer. */
export interface MessageSignature {
  contentDigest: string
  signatureInput: string
  signature: string
  /** Unix seconds: when it was made. */
  created: number
}

/**
 * Checks a request's Content-Digest (a Structured Field dictionary of byte
 * sequences, RFC 9530) against the body received, as far as this site can:
 * its sha-256 and sha-512 members. 'none' when it has neither (nothing to
 * check, so nothing to cover); 'mismatch' when it is malformed or a member
 * does not match `body`.
 */
export function checkRequestDigest(field: string, body: Buffer): 'matches' | 'none' | 'mismatch' {
  let found = false
  for (const member of field.split(',')) {
    const match = /^\s*([a-z0-9-]+)=:([A-Za-z0-9+/]*={0,2}):\s*$/.exec(member)
    if (!match) return 'mismatch'
    const algorithm = match[1] === 'sha-256' ? 'sha256' : match[1] === 'sha-512' ? 'sha512' : undefined
    if (algorithm === undefined) continue
    found = true
    if (createHash(algorithm).update(body).digest('base64') !== match[2]) return 'mismatch'
  }
  return found ? 'matches' : 'none'
}
