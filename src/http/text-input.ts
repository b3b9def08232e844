// What text input may hold, decided once for every route and every backend,
// and refused at the edge.
//
// No text holds a NUL or an unpaired surrogate. PostgreSQL cannot store
// U+0000 in text at all ("invalid byte sequence for encoding UTF8", a 500),
// SQLite would store it, and a lone surrogate (a JSON "\ud800") has no UTF-8
// form either; no name, title or search of ours needs one.
//
// Text a client prints on one line (titles, summaries, version names, tag
// names, usernames, token names, search terms: every field but the few named
// below) holds no control character either: C0 (U+0000-U+001F), DEL, C1
// (U+0080-U+009F), and the bidirectional controls (U+061C, U+200E, U+200F,
// U+202A-U+202E, U+2066-U+2069). An ESC starts a terminal escape sequence in
// the CLI or a launcher's log, a line break forges a second line, and a
// right-to-left override shows "gpj.exe" as "exe.jpg". The Markdown fields
// (MULTI_LINE_FIELDS) may also hold line breaks and tabs, nothing else.
// Passwords are compared, never shown: only the first rule, so nobody is
// locked out of a password they chose; so is a page's `next` (VERBATIM_FIELDS). A draft's `data` is stored as given
// (the create page's own state); what publishing takes from it is checked then.
// Text already stored is served as it is: these rules hold for what arrives.
//
// So, after parsing and before validation:
//   - a path parameter holding a NUL or an unpaired surrogate names nothing:
//     404, like any other path parameter that cannot name a thing
//     (docs/decisions.md#paths-and-ids; the router already answers 404 to a
//     path that does not decode); other characters are left to the lookup;
//   - a query parameter or a body field (keys and values, at any depth): 400,
//     naming the field.
// The same hook holds numbers that arrive as text to decimal digits (below).
// Multipart text fields are read as a stream, after this hook; the form
// reader applies the same rules (fieldTextFault, src/http/multipart.ts).
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

/** What is wrong with any piece of text (a NUL, an unpaired surrogate), as the end of a sentence; null when nothing is. */
export function textFault(text: string): string | null {
  if (text.includes('\u0000')) return 'contains a NUL character (U+0000)'
  if (!text.isWellFormed()) return 'is not well-formed Unicode (an unpaired surrogate)'
  return null
}

/** The fields whose text is Markdown, and may span lines: wherever a field of this name arrives (JSON, form, multipart). */
export const MULTI_LINE_FIELDS: ReadonlySet<string> = new Set(['description', 'changelog'])
/**
 * The fields never shown as they came: only textFault's rule. Passwords are compared with a hash; `next`, where
 * the gate and sign-in pages go afterwards, is replaced by a safe path when it is not one (a crafted link still
 * leads to a working form, not to a 400).
 */
const VERBATIM_FIELDS: ReadonlySet<string> = new Set(['password', 'password_repeat', 'current_password', 'new_password', 'new_password_repeat', 'next'])
/** Top-level body fields stored as given, at any depth (a draft's data: free-form by contract). */
const FREE_FORM_FIELDS: ReadonlySet<string> = new Set(['data'])

/** How a field's text may be laid out: one line, several lines (Markdown), or anything textFault lets through. */
export type TextLayout = 'line' | 'lines' | 'verbatim'

/** The layout of a field by its name (see MULTI_LINE_FIELDS); every other field is one line. */
export function layoutOf(field: string): TextLayout {
  if (MULTI_LINE_FIELDS.has(field)) return 'lines'
  return VERBATIM_FIELDS.has(field) ? 'verbatim' : 'line'
}

// C0, DEL, C1 and the bidirectional controls; the second leaves out tab (U+0009), LF (U+000A) and CR (U+000D).
const LINE_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/
const LINES_CONTROLS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

/** What is wrong with text a client prints on one line: textFault's, or a control character. */
export function lineFault(text: string): string | null {
  return textFault(text) ?? controlFault(text, LINE_CONTROLS)
}

/** What is wrong with Markdown text: textFault's, or a control character other than a line break or a tab. */
export function linesFault(text: string): string | null {
  return textFault(text) ?? controlFault(text, LINES_CONTROLS)
}

/** What is wrong with a field's text, by the field's layout. */
export function fieldTextFault(field: string, text: string): string | null {
  return faultFor(layoutOf(field), text)
}

function faultFor(layout: TextLayout, text: string): string | null {
  return layout === 'line' ? lineFault(text) : layout === 'lines' ? linesFault(text) : textFault(text)
}

function controlFault(text: string, controls: RegExp): string | null {
  const found = controls.exec(text)
  if (found === null) return null
  const code = found[0].charCodeAt(0)
  const name = `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
  if (code === 0x0a || code === 0x0d) return `contains a line break (${name}): it is one line of text`
  if (code === 0x09) return `contains a tab (${name}): it is one line of text`
  if (code >= 0x0600) return `contains a bidirectional control character (${name})`
  return `contains a control character (${name})`
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
  /** The rule for this value's text, and for its items when it is an array. */
  layout: TextLayout
  /** Inside a member stored as given (FREE_FORM_FIELDS): every name and value, at any depth, only textFault's rule. */
  free: boolean
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
  const freeForm = kind === 'body field' ? FREE_FORM_FIELDS : undefined
  const stack: Pending[] = [{ value: root, parent: null, key: null, depth: 0, layout: 'line', free: false }]
  while (stack.length > 0) {
    const item = stack.pop()!
    if (item.depth > MAX_JSON_DEPTH) return new BadRequest(`${kind}s nested deeper than ${MAX_JSON_DEPTH} levels`)
    const value = item.value as Record<string, unknown> | unknown[]
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const fault = check(value[i], item, i, stack, item.layout, item.free)
        if (fault) return new BadRequest(`the ${kind} "${where(fault.at)}" ${fault.fault}`)
      }
      continue
    }
    for (const key of Object.keys(value)) {
      const keyFault = item.free ? textFault(key) : lineFault(key)
      if (keyFault) {
        return new BadRequest(item.parent === null ? `a ${kind} name ${keyFault}` : `a member name in the ${kind} "${where(item)}" ${keyFault}`)
      }
      const free = item.free || (item.parent === null && freeForm?.has(key) === true)
      const fault = check(value[key], item, key, stack, free ? 'verbatim' : layoutOf(key), free)
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

/** Checks a string member now, by its layout; queues an object or array member for later. */
function check(member: unknown, parent: Pending, key: string | number, stack: Pending[], layout: TextLayout, free: boolean): { at: Pending; fault: string } | null {
  if (typeof member === 'string') {
    const fault = faultFor(layout, member)
    return fault ? { at: { value: member, parent, key, depth: parent.depth + 1, layout, free }, fault } : null
  }
  if (member !== null && typeof member === 'object') stack.push({ value: member, parent, key, depth: parent.depth + 1, layout, free })
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
