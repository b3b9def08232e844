// Structured Field Values for HTTP (RFC 8941), the part packs-sync needs:
// parsing a Dictionary (Signature-Input, Signature, Content-Digest) and
// serializing an Inner List (the `@signature-params` line of an RFC 9421
// signature base). The parser follows RFC 8941 section 4.2 step by step and
// fails on anything the grammar does not allow, so a header the site (or
// whoever stands between) sent in a sloppy or ambiguous form is refused
// rather than guessed at.

export class StructuredFieldError extends Error {}

export class Token {
  constructor(readonly value: string) {}
}

export type BareItem = number | string | Token | Uint8Array | boolean

export type Parameters = Map<string, BareItem>

export interface Item {
  value: BareItem
  params: Parameters
}

export interface InnerList {
  items: Item[]
  params: Parameters
}

export type Member = Item | InnerList

export function isInnerList(member: Member): member is InnerList {
  return 'items' in member
}

const KEY_FIRST = /[a-z*]/
const KEY_REST = /[a-z0-9_\-.*]/
const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z:/]/
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

class Parser {
  private at = 0

  constructor(private readonly text: string) {}

  private get next(): string | undefined {
    return this.text[this.at]
  }

  private fail(what: string): never {
    throw new StructuredFieldError(`${what} at character ${this.at + 1}`)
  }

  private skipSpaces(): void {
    while (this.next === ' ') this.at++
  }

  private skipOws(): void {
    while (this.next === ' ' || this.next === '\t') this.at++
  }

  dictionary(): Map<string, Member> {
    const members = new Map<string, Member>()
    this.skipSpaces()
    while (this.at < this.text.length) {
      const key = this.key()
      let member: Member
      if (this.next === '=') {
        this.at++
        member = this.itemOrInnerList()
      } else {
        member = { value: true, params: this.parameters() }
      }
      // RFC 8941: a key seen again replaces the earlier value (keeping its place).
      members.set(key, member)
      this.skipOws()
      if (this.at >= this.text.length) return members
      if (this.next !== ',') this.fail('expected "," between dictionary members')
      this.at++
      this.skipOws()
      if (this.at >= this.text.length) this.fail('a trailing ","')
    }
    return members
  }

  private itemOrInnerList(): Member {
    return this.next === '(' ? this.innerList() : this.item()
  }

  private innerList(): InnerList {
    this.at++
    const items: Item[] = []
    while (this.at < this.text.length) {
      this.skipSpaces()
      if (this.next === ')') {
        this.at++
        return { items, params: this.parameters() }
      }
      items.push(this.item())
      if (this.next !== ' ' && this.next !== ')') this.fail('expected " " or ")" in an inner list')
    }
    this.fail('an inner list without its ")"')
  }

  private item(): Item {
    return { value: this.bareItem(), params: this.parameters() }
  }

  private parameters(): Parameters {
    const params: Parameters = new Map()
    while (this.next === ';') {
      this.at++
      this.skipSpaces()
      const key = this.key()
      let value: BareItem = true
      if (this.text[this.at] === '=') {
        this.at++
        value = this.bareItem()
      }
      params.set(key, value)
    }
    return params
  }

  private key(): string {
    const first = this.next
    if (first === undefined || !KEY_FIRST.test(first)) this.fail('expected a key')
    const start = this.at
    this.at++
    while (this.next !== undefined && KEY_REST.test(this.next)) this.at++
    return this.text.slice(start, this.at)
  }

  private bareItem(): BareItem {
    const c = this.next
    if (c === undefined) this.fail('expected a value')
    if (c === '-' || (c >= '0' && c <= '9')) return this.number()
    if (c === '"') return this.string()
    if (c === '*' || /[A-Za-z]/.test(c)) return this.token()
    if (c === ':') return this.byteSequence()
    if (c === '?') return this.boolean()
    this.fail('not a structured field value')
  }

  private number(): number {
    const match = /^(-?)(\d+)(?:\.(\d+))?/.exec(this.text.slice(this.at))
    if (!match) this.fail('expected a number')
    const [whole, , integer, fraction] = match
    if (fraction === undefined) {
      if (integer!.length > 15) this.fail('an integer of more than 15 digits')
    } else if (integer!.length > 12 || fraction.length > 3) {
      this.fail('a decimal out of range')
    }
    this.at += whole.length
    return Number(whole)
  }

  private string(): string {
    this.at++
    let out = ''
    while (this.at < this.text.length) {
      const c = this.text[this.at++]!
      if (c === '\\') {
        const escaped = this.text[this.at++]
        if (escaped !== '"' && escaped !== '\\') this.fail('a "\\" that escapes neither "\\"" nor "\\\\"')
        out += escaped
      } else if (c === '"') {
        return out
      } else if (c < ' ' || c > '~') {
        this.fail('a character a string may not hold')
      } else {
        out += c
      }
    }
    this.fail('a string without its closing quote')
  }

  private token(): Token {
    const start = this.at
    this.at++
    while (this.next !== undefined && TCHAR.test(this.next)) this.at++
    return new Token(this.text.slice(start, this.at))
  }

  private byteSequence(): Uint8Array {
    const end = this.text.indexOf(':', this.at + 1)
    if (end === -1) this.fail('a byte sequence without its closing ":"')
    const encoded = this.text.slice(this.at + 1, end)
    if (!BASE64.test(encoded) || encoded.length % 4 !== 0) this.fail('a byte sequence that is not base64')
    this.at = end + 1
    return new Uint8Array(Buffer.from(encoded, 'base64'))
  }

  private boolean(): boolean {
    const value = this.text[this.at + 1]
    if (value !== '0' && value !== '1') this.fail('a boolean other than ?0 or ?1')
    this.at += 2
    return value === '1'
  }
}

/** An RFC 8941 Dictionary, or StructuredFieldError. */
export function parseDictionary(text: string): Map<string, Member> {
  return new Parser(text).dictionary()
}

function serializeKey(key: string): string {
  if (!/^[a-z*][a-z0-9_\-.*]*$/.test(key)) throw new StructuredFieldError(`"${key}" is not a key`)
  return key
}

export function serializeBareItem(value: BareItem): string {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new StructuredFieldError('only integers are serialized here')
    return String(value)
  }
  if (typeof value === 'string') {
    if (!/^[ -~]*$/.test(value)) throw new StructuredFieldError('a string with a character it may not hold')
    return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`
  }
  if (typeof value === 'boolean') return value ? '?1' : '?0'
  if (value instanceof Token) return value.value
  return `:${Buffer.from(value).toString('base64')}:`
}

export function serializeParameters(params: Parameters): string {
  let out = ''
  for (const [key, value] of params) out += value === true ? `;${serializeKey(key)}` : `;${serializeKey(key)}=${serializeBareItem(value)}`
  return out
}

export function serializeItem(item: Item): string {
  return serializeBareItem(item.value) + serializeParameters(item.params)
}

export function serializeInnerList(list: InnerList): string {
  return `(${list.items.map(serializeItem).join(' ')})${serializeParameters(list.params)}`
}
