// What a NUL or an unpaired surrogate in text input means, decided once for
// every route and every backend: it is refused at the edge. PostgreSQL cannot
// store U+0000 in text at all ("invalid byte sequence for encoding UTF8", a
// 500), SQLite would store it, and a lone surrogate (a JSON "\ud800") has no
// UTF-8 form either; no name, title or search of ours needs one. So, after
// parsing and before validation:
//   - a path parameter holding one names nothing: 404, like any other path
//     parameter that cannot name a thing (docs/decisions.md#paths-and-ids; the router already
//     answers 404 to a path that does not decode);
//   - a query parameter or a body field (keys and values, at any depth): 400,
//     naming the field.
// The same hook holds numbers that arrive as text to decimal digits (below).
// Multipart text fields are read as a stream, after this hook; the form
// reader applies the same rule (textFault, src/http/multipart.ts).
import type { FastifyRequest } from 'fastify'
import { BadRequest, NotFound } from '../errors.js'
import { MAX_JSON_DEPTH } from './json-body.js'
import type { App } from './types.js'

declare global {
  interface String {
    /** ES2024, in Node since 20: false when the string holds an unpaired surrogate. */
    isWellFormed(): boolean
  }
}

/** What is wrong with a piece of text, as the end of a sentence; null when nothing is. */
export function textFault(text: string): string | null {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000)'
  if (!text.isWellFormed()) return 'is not well-formed Unicode (an unpaired surrogate)'
  return null
}

export function installTextInputCheck(app: App): void {
  // Callback style and no allocation when all is well: the update-check passes here on every game start.
  app.addHook('preValidation', (request, _reply, done) => {
    const params = request.params as Record<string, unknown> | undefined
    if (params) {
      for (const name in params) {
        const value = params[name]
        const fault = typeof value === 'string' ? textFault(value) : null
        if (fault) return done(new NotFound(`not found: the path parameter "${name}" ${fault}`))
      }
    }
    const error = fieldError('query parameter', request.query) ?? fieldError('body field', request.body) ?? numberError(request)
    done(error ?? undefined)
  })
}

/** Decimal digits, with a sign and a fraction where the schema says number; 15 digits keep every value exact. */
const INTEGER_TEXT = /^-?[0-9]{1,15}$/
const NUMBER_TEXT = /^-?[0-9]{1,15}(?:\.[0-9]{1,15})?$/

type NumericFields = ReadonlyArray<readonly [name: string, type: 'integer' | 'number']>
const numericFieldsOf = new WeakMap<object, NumericFields>()

/**
 * A number that arrives as text (every query parameter; a quoted number in a
 * body) must be written in decimal digits. The validator's type coercion turns
 * any text JavaScript reads as a number into one: "Infinity" became a page
 * number its minimum and maximum checks skip, and the database failed on it.
 */
function numberError(request: FastifyRequest): BadRequest | null {
  const query = request.query as Record<string, unknown> | undefined
  const body = request.body as Record<string, unknown> | undefined
  const hasQuery = query !== undefined && query !== null && !isEmpty(query)
  const hasBody = body !== undefined && body !== null && typeof body === 'object' && !Array.isArray(body)
  if (!hasQuery && !hasBody) return null
  const schema = request.routeOptions.schema
  if (hasQuery) {
    const error = numberTextError('query parameter', query, numericFields(schema?.querystring))
    if (error) return error
  }
  return hasBody ? numberTextError('body field', body, numericFields(schema?.body)) : null
}

function numberTextError(kind: string, values: Record<string, unknown>, fields: NumericFields): BadRequest | null {
  for (const [name, type] of fields) {
    const value = values[name]
    for (const text of Array.isArray(value) ? value : [value]) {
      if (typeof text !== 'string' || (type === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(text)) continue
      const shown = text.length > 20 ? `${text.slice(0, 20)}…` : text
      return new BadRequest(`the ${kind} "${name}" must be ${type === 'integer' ? 'a whole number' : 'a number'} in decimal digits, not "${shown}"`)
    }
  }
  return null
}

/** The integer and number properties of an object schema, found once per schema. */
function numericFields(schema: unknown): NumericFields {
  if (schema === null || typeof schema !== 'object') return []
  let fields = numericFieldsOf.get(schema)
  if (fields === undefined) {
    const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {}
    const found: [string, 'integer' | 'number'][] = []
    for (const [name, property] of Object.entries(properties)) {
      const types = Array.isArray(property.type) ? property.type : [property.type]
      if (types.includes('integer')) found.push([name, 'integer'])
      else if (types.includes('number')) found.push([name, 'number'])
    }
    fields = found
    numericFieldsOf.set(schema, fields)
  }
  return fields
}

interface Pending {
  value: unknown
  parent: Pending | null
  key: string | number | null
  depth: number
}

/**
 * The first text fault anywhere in a parsed query or body, as a 400 naming
 * where it is. Walked with an explicit stack, not recursion, and the JSON
 * parser's depth limit holds here too, whoever parsed the body.
 */
function fieldError(kind: string, root: unknown): BadRequest | null {
  if (root === undefined || root === null) return null
  if (typeof root === 'string') {
    const fault = textFault(root)
    return fault ? new BadRequest(`the request body ${fault}`) : null
  }
  if (typeof root !== 'object' || isEmpty(root)) return null
  const stack: Pending[] = [{ value: root, parent: null, key: null, depth: 0 }]
  while (stack.length > 0) {
    const item = stack.pop()!
    if (item.depth > MAX_JSON_DEPTH) return new BadRequest(`${kind}s nested deeper than ${MAX_JSON_DEPTH} levels`)
    const value = item.value as Record<string, unknown> | unknown[]
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const fault = check(value[i], item, i, stack)
        if (fault) return new BadRequest(`the ${kind} "${where(fault.at)}" ${fault.fault}`)
      }
      continue
    }
    for (const key of Object.keys(value)) {
      const keyFault = textFault(key)
      if (keyFault) {
        return new BadRequest(item.parent === null ? `a ${kind} name ${keyFault}` : `a member name in the ${kind} "${where(item)}" ${keyFault}`)
      }
      const fault = check(value[key], item, key, stack)
      if (fault) return new BadRequest(`the ${kind} "${where(fault.at)}" ${fault.fault}`)
    }
  }
  return null
}

/** No own members, found without allocating (the update-check's query is always empty). */
function isEmpty(value: object): boolean {
  for (const _ in value) return false
  return true
}

/** Checks a string member now; queues an object or array member for later. */
function check(member: unknown, parent: Pending, key: string | number, stack: Pending[]): { at: Pending; fault: string } | null {
  if (typeof member === 'string') {
    const fault = textFault(member)
    return fault ? { at: { value: member, parent, key, depth: parent.depth + 1 }, fault } : null
  }
  if (member !== null && typeof member === 'object') stack.push({ value: member, parent, key, depth: parent.depth + 1 })
  return null
}

/** "data.tags[2]": the path of a member, built only when there is something to report. */
function where(item: Pending): string {
  const parts: string[] = []
  for (let at: Pending | null = item; at !== null && at.key !== null; at = at.parent) {
    parts.push(typeof at.key === 'number' ? `[${at.key}]` : `.${shorten(at.key)}`)
  }
  const path = parts.reverse().join('').replace(/^\./, '')
  return path.length > 200 ? `…${path.slice(-200)}` : path
}

/** Member names are the client's: long ones are cut so the detail stays readable. */
function shorten(key: string): string {
  return key.length > 40 ? `${key.slice(0, 40)}…` : key
}
