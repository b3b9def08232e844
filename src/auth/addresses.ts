// Which client a failed attempt is counted against. An IPv4 address is one
// client. An IPv6 address is not: a single host or customer is routinely given
// a whole /64 (and picks new addresses in it at will, RFC 8981), so the
// attempts of a /64 are counted together. An IPv4-mapped IPv6 address
// (::ffff:192.0.2.1, what a dual-stack socket reports) is its IPv4 address.
import { isIPv6 } from 'node:net'
import { sha256Hex } from './secrets.js'

/** The key `request.ip` is counted under: the IPv4 address, or `<first four groups>::/64` for IPv6. */
export function clientKey(ip: string | undefined): string {
  // The hot path: a socket's IPv4 address, decided without parsing.
  if (typeof ip === 'string' && ip.length <= 15 && !ip.includes(':')) return ip
  // A socket already closed has no address left; such clients are counted together.
  if (ip === undefined) return 'unknown'
  const zone = ip.indexOf('%')
  const address = zone === -1 ? ip : ip.slice(0, zone)
  const groups = isIPv6(address) ? ipv6Groups(address) : undefined
  // Not an address at all (only a trusted proxy's header could say so): a fixed-size key, whatever its length.
  if (!groups) return `other:${sha256Hex(ip).slice(0, 32)}`
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (node:net checked it), `::` and a dotted IPv4 tail expanded. */
function ipv6Groups(address: string): number[] {
  const parse = (part: string): number[] => {
    if (part === '') return []
    const groups: number[] = []
    for (const piece of part.split(':')) {
      if (piece.includes('.')) {
        const [a, b, c, d] = piece.split('.').map(Number) as [number, number, number, number]
        groups.push((a << 8) | b, (c << 8) | d)
      } else {
        groups.push(parseInt(piece, 16))
      }
    }
    return groups
  }
  const gap = address.indexOf('::')
  if (gap === -1) return parse(address)
  const head = parse(address.slice(0, gap))
  const tail = parse(address.slice(gap + 2))
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail]
}
