// Checking a Packs answer's RFC 9421 HTTP Message Signature (with RFC 9530's
// Content-Digest), as docs/update-protocol.md defines it: label `packs`,
// Ed25519, tag `packs-update`, covering the answer's status and body digest
// and the question it answers (the request's method, path, query and, for a
// POST, the request's own Content-Digest). The signature base is rebuilt here
// from the request packs-sync itself sent, never from what the answer says it
// answered, so an answer recorded for another question does not verify.
import { createHash, verify, type KeyObject } from 'node:crypto'
import { StructuredFieldError, isInnerList, parseDictionary, serializeInnerList, serializeItem, type InnerList, type Member } from './sfv.js'

export const LABEL = 'packs'
export const TAG = 'packs-update'
/** A clock ahead of ours by less than this is tolerated in `created`. */
export const CLOCK_SKEW_SECONDS = 60
/** The longest lifetime the protocol allows a signature (PACKS_SIGNATURE_TTL is at most 7 days). */
export const MAX_LIFETIME_SECONDS = 7 * 86_400

export class SignatureError extends Error {}

/** What packs-sync sent: the signature must be about exactly this. */
export interface SentRequest {
  method: string
  url: URL
  /** The Content-Digest header packs-sync sent with a POST body. */
  contentDigest?: string
}

/** The signature's parameters, once its syntax and the question it answers are checked (not yet its key). */
export interface SignatureParams {
  keyId: string
  created: number
  expires: number
  signature: Buffer
  base: Buffer
}

/** `sha-256=:<base64>:` for these bytes (RFC 9530). */
export function contentDigestOf(body: Uint8Array): string {
  return `sha-256=:${createHash('sha256').update(body).digest('base64')}:`
}

function dictionary(headers: Headers, name: string): Map<string, Member> {
  const value = headers.get(name)
  if (value === null) throw new SignatureError(`the site's answer is not signed (no ${name} header)`)
  try {
    return parseDictionary(value)
  } catch (error) {
    throw new SignatureError(`the site's answer has a malformed ${name} header: ${(error as StructuredFieldError).message}`)
  }
}

/** The components a Packs signature must cover for this request, as `name;params` strings. */
function requiredComponents(request: SentRequest): string[] {
  const components = ['"@status"', '"content-digest"', '"@method";req', '"@path";req', '"@query";req']
  if (request.contentDigest !== undefined) components.push('"content-digest";req')
  return components
}

/** The value of one covered component (RFC 9421 section 2), from our request and the answer. */
function componentValue(name: string, req: boolean, request: SentRequest, status: number, headers: Headers): string {
  if (req) {
    if (name === '@method') return request.method
    if (name === '@path') return request.url.pathname
    if (name === '@query') return request.url.search === '' ? '?' : request.url.search
    if (name === 'content-digest' && request.contentDigest !== undefined) return request.contentDigest
  } else {
    if (name === '@status') return String(status)
    if (name === 'content-digest') return headers.get('content-digest')!.trim()
  }
  throw new SignatureError(`the site's signature covers ${name}, which packs-sync cannot rebuild`)
}

/**
 * Checks that the answer's body is the one its Content-Digest names, that a
 * `packs` signature covers exactly what this request needs, with Ed25519 and
 * the packs-update tag, and that it is fresh at `now` (Unix seconds). Returns
 * the key id, times and the signature base; the caller chooses the key and
 * calls `verifyWith`.
 */
export function checkSignature(request: SentRequest, status: number, headers: Headers, body: Uint8Array, now: number): SignatureParams {
  const digests = dictionary(headers, 'content-digest')
  const sha256 = digests.get('sha-256')
  if (sha256 === undefined || isInnerList(sha256) || !(sha256.value instanceof Uint8Array)) {
    throw new SignatureError('the site\'s answer has no sha-256 member in its Content-Digest header')
  }
  if (!Buffer.from(sha256.value).equals(createHash('sha256').update(body).digest())) {
    throw new SignatureError('the site\'s answer does not match its Content-Digest (the body was changed or cut short)')
  }

  const input = dictionary(headers, 'signature-input').get(LABEL)
  const signature = dictionary(headers, 'signature').get(LABEL)
  if (input === undefined || signature === undefined) throw new SignatureError(`the site's answer has no signature labelled "${LABEL}"`)
  if (!isInnerList(input)) throw new SignatureError(`the site's Signature-Input "${LABEL}" is not a list of components`)
  if (isInnerList(signature) || !(signature.value instanceof Uint8Array) || signature.value.length !== 64) {
    throw new SignatureError(`the site's Signature "${LABEL}" is not a 64-byte Ed25519 signature`)
  }

  const params = input.params
  const alg = params.get('alg')
  const tag = params.get('tag')
  const keyId = params.get('keyid')
  const created = params.get('created')
  const expires = params.get('expires')
  if (alg !== 'ed25519') throw new SignatureError('the site\'s signature is not alg="ed25519"')
  if (tag !== TAG) throw new SignatureError(`the site's signature is not tagged "${TAG}"`)
  if (typeof keyId !== 'string' || !/^[0-9a-f]{16}$/.test(keyId)) throw new SignatureError('the site\'s signature names no valid keyid')
  if (!Number.isInteger(created) || !Number.isInteger(expires)) throw new SignatureError('the site\'s signature lacks its created or expires time')
  const createdAt = created as number
  const expiresAt = expires as number

  // Exactly the components this request needs: one missing would leave part of the question unbound,
  // one more would be a component packs-sync did not ask to be vouched for.
  const covered = input.items.map((item) => {
    if (typeof item.value !== 'string') throw new SignatureError('the site\'s Signature-Input lists a component that is not a string')
    for (const [key, value] of item.params) {
      if (key !== 'req' || value !== true) throw new SignatureError(`the site's signature covers "${item.value}" with a parameter packs-sync does not use (${key})`)
    }
    return serializeItem(item)
  })
  const required = requiredComponents(request)
  const missing = required.filter((component) => !covered.includes(component))
  const extra = covered.filter((component) => !required.includes(component))
  if (missing.length > 0 || extra.length > 0 || new Set(covered).size !== covered.length) {
    throw new SignatureError(`the site's signature does not cover exactly what packs-sync asked (${missing.length > 0 ? `missing ${missing.join(' ')}` : `also ${extra.join(' ') || 'a component twice'}`})`)
  }

  if (createdAt > now + CLOCK_SKEW_SECONDS) throw new SignatureError(`the site's answer was signed in the future (${isoOf(createdAt)}; is this computer's clock right?)`)
  if (expiresAt <= now) throw new SignatureError(`the site's answer expired at ${isoOf(expiresAt)} (an old answer replayed, or this computer's clock is wrong)`)
  if (expiresAt <= createdAt || expiresAt - createdAt > MAX_LIFETIME_SECONDS) throw new SignatureError('the site\'s signature has a lifetime the protocol does not allow')

  return { keyId, created: createdAt, expires: expiresAt, signature: Buffer.from(signature.value), base: signatureBase(input, request, status, headers) }
}

/** RFC 9421 section 2.5: one line per covered component, then the signature parameters, no newline at the end. */
function signatureBase(input: InnerList, request: SentRequest, status: number, headers: Headers): Buffer {
  const lines = input.items.map((item) => `${serializeItem(item)}: ${componentValue(item.value as string, item.params.has('req'), request, status, headers)}`)
  lines.push(`"@signature-params": ${serializeInnerList(input)}`)
  return Buffer.from(lines.join('\n'), 'utf8')
}

export function verifyWith(params: SignatureParams, key: KeyObject): boolean {
  return verify(null, params.base, key, params.signature)
}

export function isoOf(seconds: number): string {
  const date = new Date(seconds * 1000)
  return Number.isNaN(date.getTime()) ? String(seconds) : date.toISOString()
}
