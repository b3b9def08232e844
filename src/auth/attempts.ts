// Password checks under the failure limits (limiter.ts): the gate password
// (header or form) and account passwords (sign-in, password change). A
// blocked client gets 429 whatever the password (a right one must not answer
// differently), a wrong password 401.
import { TooManyRequests, Unauthorized } from '../errors.js'
import type { App } from '../http/types.js'
import { clientKey } from './addresses.js'
import type { AttemptKind } from './limiter.js'

/**
 * The gate password under the gate's failure limit: counted in one atomic
 * step when the answer needs no scrypt, else through checkScryptGatePassword.
 */
export async function checkGatePassword(app: App, clientAddress: string, password: string, failureDetail: string): Promise<void> {
  let known = await app.gate.verifyPasswordCheaply(password)
  if (known === undefined) {
    const inFlight = app.gate.verificationInFlight(password)
    // The same password is being checked already: its answer is settled like a cheap one (a wrong one counts).
    // If that check never answered (its client was blocked, the pool was busy), this request tries on its own.
    if (inFlight !== undefined) known = await inFlight.catch(() => undefined)
    if (known === undefined) return checkScryptGatePassword(app, clientAddress, password, failureDetail)
  }
  const error = attemptError('gate', await app.attemptLimiters.gate.settle(clientKey(clientAddress), known), known, failureDetail)
  if (error) throw error
}

/**
 * The scrypt check of a gate password, counted first like checkPasswordAttempt;
 * through Gate.verifyAdmitted, so the same password arriving while this
 * client's place is being reserved joins this check instead of taking a place.
 */
async function checkScryptGatePassword(app: App, clientAddress: string, password: string, failureDetail: string): Promise<void> {
  let refund: (() => Promise<void>) | undefined
  let succeeded: boolean
  try {
    succeeded = await app.gate.verifyAdmitted(password, async () => {
      const reservation = await app.attemptLimiters.gate.reserve(clientKey(clientAddress))
      if (!('refund' in reservation)) throw attemptError('gate', reservation.retryAfter, false, failureDetail)!
      refund = () => reservation.refund()
    })
  } catch (error) {
    // The check never answered (blocked, the server was busy): that was no guess.
    await refund?.().catch(() => undefined)
    throw error
  }
  if (!succeeded) throw new Unauthorized(failureDetail)
  await refund?.()
}

/**
 * Runs a password check that costs a scrypt under the failure limit of `kind`,
 * counting first: the attempt is reserved before the check runs (a blocked
 * client gets 429 and no check), kept as a failure when the password was
 * wrong (401), given back when it was right or the check could not run.
 */
export async function checkPasswordAttempt(
  app: App,
  kind: AttemptKind,
  clientAddress: string,
  check: () => Promise<boolean>,
  failureDetail: string,
): Promise<void> {
  const reservation = await app.attemptLimiters[kind].reserve(clientKey(clientAddress))
  if (!('refund' in reservation)) throw attemptError(kind, reservation.retryAfter, false, failureDetail)!
  let succeeded: boolean
  try {
    succeeded = await check()
  } catch (error) {
    // The check never answered (the server was busy, the database failed): that was no guess.
    await reservation.refund().catch(() => undefined)
    throw error
  }
  if (!succeeded) throw new Unauthorized(failureDetail)
  await reservation.refund()
}

const ATTEMPTS_AT: Record<AttemptKind, string> = { gate: 'the site password', login: 'account passwords', feed: 'feed tokens' }

/** The answer to an attempt the limiter has settled: 429 while blocked, 401 for a wrong password, else undefined. */
export function attemptError(kind: AttemptKind, blockedFor: number, succeeded: boolean, failureDetail: string): Error | undefined {
  if (blockedFor > 0) {
    return new TooManyRequests(`too many failed attempts at ${ATTEMPTS_AT[kind]} from your address; retry in ${blockedFor} s`, blockedFor)
  }
  return succeeded ? undefined : new Unauthorized(failureDetail)
}
