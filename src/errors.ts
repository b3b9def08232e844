// Typed domain errors. Domain and db code throw these; the HTTP error handler
// (src/http/errors.ts) is the one place that turns them into a status and a
// `{ detail }` body.

export abstract class DomainError extends Error {
  abstract readonly status: number
  constructor(readonly detail: string) {
    super(detail)
    this.name = new.target.name
  }
}

export class BadRequest extends DomainError {
  readonly status = 400
}

export class Unauthorized extends DomainError {
  readonly status = 401
}

export class Forbidden extends DomainError {
  readonly status = 403
}

export class NotFound extends DomainError {
  readonly status = 404
}

export class Conflict extends DomainError {
  readonly status = 409
}

export class PayloadTooLarge extends DomainError {
  readonly status = 413
}

export class TooManyRequests extends DomainError {
  readonly status = 429
  constructor(detail: string, readonly retryAfterSeconds: number) {
    super(detail)
  }
}

/** An uploaded file whose bytes are not what its kind allows. */
export class InvalidUpload extends BadRequest {}

/** How long a client is told to wait (Retry-After) when a backend is unavailable. */
export const RETRY_AFTER_UNAVAILABLE_SECONDS = 5

/**
 * A backend (storage, database, Redis) cannot serve the request now: 503 with
 * Retry-After, and the real failure kept as `cause` for the one log line the
 * error handler writes.
 */
export class ServiceUnavailable extends DomainError {
  readonly status = 503
  readonly retryAfterSeconds = RETRY_AFTER_UNAVAILABLE_SECONDS
  constructor(detail: string, options: { cause?: unknown } = {}) {
    super(detail)
    if ('cause' in options) this.cause = options.cause
  }
}

/**
 * Thrown by the FileStores when the store itself fails (unreachable, refused,
 * disk error), never for a missing key (ENOENT) or for the source stream's own
 * error (an upload over its limit, a client gone), which keep their meaning.
 */
export class StorageUnavailable extends ServiceUnavailable {
  constructor(cause: unknown) {
    super('storage is unavailable, try again', { cause })
  }
}

// SQLite: locked past busy_timeout, or the disk failing under it.
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL)/
// PostgreSQL SQLSTATEs: class 08 connection exception, class 53 insufficient
// resources (too many connections, disk full, out of memory), 57P01-57P03
// admin shutdown, crash shutdown, cannot connect now (starting up).
const PG_UNAVAILABLE = /^(08...|53...|57P0[123])$/
// What pg and pg-pool throw, without a code, when the connection goes or never comes.
const PG_CONNECTION_LOST = /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/
// A socket to the database server that failed to open or broke (FileStores wrap their own).
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'EAI_AGAIN', 'ENOTFOUND'])

/**
 * Whether a database driver's error means "the database cannot answer now"
 * (a retry may succeed) rather than a fault in the query or the data.
 */
export function databaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string') {
    if (SQLITE_UNAVAILABLE.test(code)) return true
    // pg's DatabaseError carries the server's severity; a bare errno code does not.
    if ('severity' in error && PG_UNAVAILABLE.test(code)) return true
    // A socket's own error names its syscall; a client's aborted request (also ECONNRESET) does not.
    if (SOCKET_ERRORS.has(code) && 'syscall' in error) return true
  }
  if (PG_CONNECTION_LOST.test(error.message)) return true
  // A host name with several addresses fails with one error per address.
  return error instanceof AggregateError && error.errors.length > 0 && error.errors.every(databaseUnavailable)
}
