// The site-wide gate (CONTRACT §2). Its password comes from PACKS_MASTER_PASSWORD
// or, when that is unset, from a scrypt hash in the settings table (generated on
// first start, changed by `packs master-password set`).
import { randomBytes } from 'node:crypto'
import type { Db } from '../db/index.js'
import { getOrCreateSetting, getSetting, putSetting } from '../db/credentials.js'
import { timingSafeEqual } from 'node:crypto'
import { hashPassword, hmacHex, safeEqual, sha256Digest, sha256Hex, verifyPassword } from './secrets.js'

const MASTER_PASSWORD_KEY = 'master_password_hash'
const SITE_SECRET_KEY = 'site_secret'
/** How long a running server trusts its copy of the stored hash; a CLI change reaches it within this time. */
const STORED_HASH_TTL_MS = 5_000

export class Gate {
  private storedHash: { value: string | undefined; readAt: number } | undefined
  /** SHA-256 of the last candidate that verified against `storedHash`, so scrypt runs once per password, not per request. */
  private verified: { hash: string; candidateDigest: string } | undefined
  /** SHA-256 of PACKS_MASTER_PASSWORD, computed once: the gate runs on every request. */
  private readonly envDigest: Buffer | null

  private constructor(
    private readonly db: Db,
    private readonly envPassword: string | null,
    /** Keys the HMACs of gate cookies and CSRF tokens; shared by every instance through the database. */
    readonly siteSecret: string,
  ) {
    this.envDigest = envPassword === null ? null : sha256Digest(envPassword)
  }

  static async open(db: Db, envPassword: string | null): Promise<Gate> {
    const secret = await getOrCreateSetting(db, SITE_SECRET_KEY, () => randomBytes(32).toString('hex'))
    return new Gate(db, envPassword, secret)
  }

  /**
   * Makes sure a gate password exists. Returns the new password when this call
   * generated one (first start without PACKS_MASTER_PASSWORD), so it can be shown once.
   */
  async ensurePassword(): Promise<string | null> {
    if (this.envPassword !== null) return null
    if (await getSetting(this.db, MASTER_PASSWORD_KEY)) return null
    const password = randomBytes(18).toString('base64url')
    const hash = await hashPassword(password)
    const stored = await getOrCreateSetting(this.db, MASTER_PASSWORD_KEY, () => hash)
    // Another instance may have won the race; only the winner prints.
    return stored === hash ? password : null
  }

  async setPassword(password: string): Promise<void> {
    await putSetting(this.db, MASTER_PASSWORD_KEY, await hashPassword(password))
    this.storedHash = undefined
  }

  get passwordFromEnvironment(): boolean {
    return this.envPassword !== null
  }

  /**
   * The answer when it needs no I/O and no scrypt: always for an environment
   * password, and for a stored one already verified and still fresh. Else
   * undefined, and verifyPassword gives the answer.
   */
  verifyPasswordSync(candidate: string): boolean | undefined {
    // Comparing digests keeps the comparison constant-time whatever the lengths.
    if (this.envDigest !== null) return timingSafeEqual(sha256Digest(candidate), this.envDigest)
    const stored = this.storedHash
    const verified = this.verified
    if (!stored || !verified || Date.now() - stored.readAt > STORED_HASH_TTL_MS || verified.hash !== stored.value) return undefined
    return safeEqual(sha256Hex(candidate), verified.candidateDigest)
  }

  async verifyPassword(candidate: string): Promise<boolean> {
    const known = this.verifyPasswordSync(candidate)
    if (known !== undefined) return known
    const hash = await this.currentHash()
    if (!hash) return false
    // The stored copy is fresh now; once one password verified against this hash, no other can.
    const refreshed = this.verifyPasswordSync(candidate)
    if (refreshed !== undefined) return refreshed
    if (!(await verifyPassword(candidate, hash))) return false
    this.verified = { hash, candidateDigest: sha256Hex(candidate) }
    return true
  }

  /** The gate cookie's value. Bound to the current password, so changing the password signs everyone out of the gate. */
  async cookieValue(): Promise<string> {
    return hmacHex(this.siteSecret, `gate|${await this.passwordFingerprint()}`)
  }

  async verifyCookie(value: string): Promise<boolean> {
    return safeEqual(value, await this.cookieValue())
  }

  private async passwordFingerprint(): Promise<string> {
    if (this.envPassword !== null) return sha256Hex(this.envPassword)
    return (await this.currentHash()) ?? 'unset'
  }

  private async currentHash(): Promise<string | undefined> {
    const now = Date.now()
    if (!this.storedHash || now - this.storedHash.readAt > STORED_HASH_TTL_MS) {
      this.storedHash = { value: await getSetting(this.db, MASTER_PASSWORD_KEY), readAt: now }
    }
    return this.storedHash.value
  }
}
