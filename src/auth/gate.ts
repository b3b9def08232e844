// The site-wide gate (docs/decisions.md#the-gate). Its password comes from PACKS_MASTER_PASSWORD
// or, when that is unset, from a scrypt hash in the settings table (generated on
// first start, changed by `packs master-password set`).
import { randomBytes } from 'node:crypto'
import type { Db } from '../db/index.js'
import { getOrCreateSetting, getSetting, putSetting } from './credentials-repository.js'
import type { PasswordHasher } from './passwords.js'
import { SecretMatcher, hmacHex, safeEqual, sha256Hex } from './secrets.js'

const MASTER_PASSWORD_KEY = 'master_password_hash'
const SITE_SECRET_KEY = 'site_secret'
/** How long a running server trusts its copy of the stored hash; a CLI change reaches it within this time. */
const STORED_HASH_TTL_MS = 5_000

export class Gate {
  private storedHash: { value: string | undefined; readAt: number } | undefined
  /** The last candidate that verified against `storedHash`, so scrypt runs once per password, not per request. */
  private verified: { hash: string; candidate: SecretMatcher } | undefined
  /** scrypt checks in flight, by SHA-256 of the candidate and the hash it is checked against. */
  private readonly verifying = new Map<string, Promise<boolean>>()
  /** PACKS_MASTER_PASSWORD's matcher: the gate runs on every request. */
  private readonly envMatcher: SecretMatcher | null

  private constructor(
    private readonly db: Db,
    private readonly envPassword: string | null,
    private readonly passwords: PasswordHasher,
    /** Keys the HMACs of gate cookies and CSRF tokens; shared by every instance through the database. */
    readonly siteSecret: string,
  ) {
    this.envMatcher = envPassword === null ? null : new SecretMatcher(envPassword)
  }

  static async open(db: Db, envPassword: string | null, passwords: PasswordHasher): Promise<Gate> {
    const secret = await getOrCreateSetting(db, SITE_SECRET_KEY, () => randomBytes(32).toString('hex'))
    return new Gate(db, envPassword, passwords, secret)
  }

  /**
   * Makes sure a gate password exists. Returns the new password when this call
   * generated one (first start without PACKS_MASTER_PASSWORD), so it can be shown once.
   */
  async ensurePassword(): Promise<string | null> {
    if (this.envPassword !== null) return null
    if (await getSetting(this.db, MASTER_PASSWORD_KEY)) return null
    const password = randomBytes(18).toString('base64url')
    const hash = await this.passwords.hash(password)
    const stored = await getOrCreateSetting(this.db, MASTER_PASSWORD_KEY, () => hash)
    // Another instance may have won the race; only the winner prints.
    return stored === hash ? password : null
  }

  async setPassword(password: string): Promise<void> {
    await putSetting(this.db, MASTER_PASSWORD_KEY, await this.passwords.hash(password))
    this.storedHash = undefined
  }

  /**
   * The answer when it needs no I/O and no scrypt: always for an environment
   * password, and for a stored one already verified and still fresh. Else
   * undefined, and verifyPasswordCheaply gives the answer.
   */
  verifyPasswordSync(candidate: string): boolean | undefined {
    if (this.envMatcher !== null) return this.envMatcher.matches(candidate)
    const stored = this.storedHash
    const verified = this.verified
    if (!stored || !verified || Date.now() - stored.readAt > STORED_HASH_TTL_MS || verified.hash !== stored.value) return undefined
    return verified.candidate.matches(candidate)
  }

  /**
   * The answer when it needs no scrypt (perhaps a read of the stored hash);
   * undefined when only verifyAdmitted can tell, at the cost of one scrypt,
   * which the caller must count against the client first (./attempts.ts).
   */
  async verifyPasswordCheaply(candidate: string): Promise<boolean | undefined> {
    const known = this.verifyPasswordSync(candidate)
    if (known !== undefined) return known
    const hash = await this.currentHash()
    if (!hash) return false
    // The stored copy is fresh now; once one password verified against this hash, no other can.
    return this.verifyPasswordSync(candidate)
  }

  /**
   * The check of this very candidate already in flight, if any: joining it
   * costs no scrypt, so it needs no place of its own in the failure count
   * (players whose mods start together after a restart all send the same
   * password). Call right after verifyPasswordCheaply, which read the hash.
   */
  verificationInFlight(candidate: string): Promise<boolean> | undefined {
    const hash = this.storedHash?.value
    return hash ? this.verifying.get(`${sha256Hex(candidate)}|${hash}`) : undefined
  }

  /**
   * Starts the one scrypt check of this candidate once `admit` (the caller's
   * place in the failure count) resolves. It is registered before anything is
   * awaited, so requests for the same candidate that arrive meanwhile join it
   * (verificationInFlight) instead of each taking a place. Call right after
   * verifyPasswordCheaply answered undefined.
   */
  verifyAdmitted(candidate: string, admit: () => Promise<void>): Promise<boolean> {
    const hash = this.storedHash?.value
    if (!hash) return Promise.resolve(false)
    const digest = sha256Hex(candidate)
    const key = `${digest}|${hash}`
    const existing = this.verifying.get(key)
    if (existing) return existing
    const pending = (async () => {
      await admit()
      const ok = await this.passwords.verify(candidate, hash)
      if (ok) this.verified = { hash, candidate: new SecretMatcher(candidate) }
      return ok
    })().finally(() => this.verifying.delete(key))
    this.verifying.set(key, pending)
    return pending
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
