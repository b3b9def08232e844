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
