// Which IP addresses a webhook may connect to. A webhook's URL is chosen by
// whoever owns a pack, and the server connects to it from inside the site's
// own network: an address that leads back in (the machine itself, its LAN,
// the cloud provider's metadata service that hands out credentials) would let
// anyone with a pack make the server send requests only the server should
// send (server-side request forgery). So only addresses meant to be reached
// across the public internet are allowed; IANA's IPv4 and IPv6
// Special-Purpose Address Registries (RFC 6890) list the others.
//
// Choices beyond the obvious ranges:
//   - documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24,
//     2001:db8::/32, 3fff::/20) are refused: no receiver lives there, and
//     some networks use them inside;
//   - the IETF protocol block 192.0.0/24, the retired 6to4 relay 192.88.99/24,
//     site-local fec0::/10, local-use NAT64 64:ff9b:1::/48 and the discard
//     prefix 100::/64 are refused too: none is a public receiver;
//   - Teredo (2001::/32) is refused whole: the IPv4 address it carries is
//     obfuscated and reached through a relay, so it cannot be judged;
//   - an IPv6 address that carries an IPv4 address reaches that address, so
//     it is judged by it: IPv4-mapped (::ffff:a.b.c.d, also written
//     ::ffff:7f00:1), IPv4-compatible (::a.b.c.d), IPv4-translated
//     (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16);
//   - an address with a zone index (fe80::1%eth0) is scoped to one link:
//     refused.
//
// The ranges are node's own net.BlockList, so no prefix arithmetic is written
// here; only the IPv4 address inside an IPv6 one is read out by hand.
import { BlockList, isIPv4, isIPv6 } from 'node:net'

type Family = 'ipv4' | 'ipv6'
/** A reason (the end of "… is …") and the subnets it covers, as [network address, prefix length]. */
type Rule = readonly [reason: string, subnets: ReadonlyArray<readonly [string, number]>]

const METADATA = 'the cloud metadata address'
const LOOPBACK = 'a loopback address'
const PRIVATE = 'a private address'
const LINK_LOCAL = 'a link-local address'
const MULTICAST = 'a multicast address'
const UNSPECIFIED = 'an unspecified address'
const DOCUMENTATION = 'a documentation address'
const BENCHMARKING = 'a benchmarking address'
const RESERVED = 'a reserved address'

/** In order: the first rule that holds gives the reason, so the narrow ones (metadata, broadcast) come first. */
const IPV4_RULES: readonly Rule[] = [
  [METADATA, [['169.254.169.254', 32]]],
  ['the broadcast address', [['255.255.255.255', 32]]],
  [UNSPECIFIED, [['0.0.0.0', 8]]],
  [LOOPBACK, [['127.0.0.0', 8]]],
  [PRIVATE, [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16]]],
  [LINK_LOCAL, [['169.254.0.0', 16]]],
  ['a shared (carrier-grade NAT) address', [['100.64.0.0', 10]]],
  [MULTICAST, [['224.0.0.0', 4]]],
  [BENCHMARKING, [['198.18.0.0', 15]]],
  [DOCUMENTATION, [['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24]]],
  [RESERVED, [['240.0.0.0', 4], ['192.0.0.0', 24], ['192.88.99.0', 24]]],
]

const IPV6_RULES: readonly Rule[] = [
  [METADATA, [['fd00:ec2::254', 128]]],
  [UNSPECIFIED, [['::', 128]]],
  [LOOPBACK, [['::1', 128]]],
  [PRIVATE, [['fc00::', 7], ['fec0::', 10], ['64:ff9b:1::', 48]]],
  [LINK_LOCAL, [['fe80::', 10]]],
  [MULTICAST, [['ff00::', 8]]],
  ['a discard-only address', [['100::', 64]]],
  [BENCHMARKING, [['2001:2::', 48]]],
  [DOCUMENTATION, [['2001:db8::', 32], ['3fff::', 20]]],
  ['a Teredo tunnel address', [['2001::', 32]]],
]

/** IPv6 prefixes that carry an IPv4 address, and the 16-bit group where it starts. */
const EMBEDDING: ReadonlyArray<readonly [prefix: string, length: number, group: number]> = [
  ['::ffff:0:0', 96, 6], // IPv4-mapped
  ['::', 96, 6], // IPv4-compatible (:: and ::1 are judged above, before this)
  ['::ffff:0:0:0', 96, 6], // IPv4-translated (SIIT)
  ['64:ff9b::', 96, 6], // NAT64's well-known prefix
  ['2002::', 16, 1], // 6to4
]

function compile(rules: readonly Rule[], family: Family): Array<readonly [string, BlockList]> {
  return rules.map(([reason, subnets]) => {
    const list = new BlockList()
    for (const [network, prefix] of subnets) list.addSubnet(network, prefix, family)
    return [reason, list] as const
  })
}

const IPV4_LISTS = compile(IPV4_RULES, 'ipv4')
const IPV6_LISTS = compile(IPV6_RULES, 'ipv6')
const EMBEDDING_LISTS = EMBEDDING.map(([prefix, length, group]) => {
  const list = new BlockList()
  list.addSubnet(prefix, length, 'ipv6')
  return [list, group] as const
})

function firstReason(lists: ReadonlyArray<readonly [string, BlockList]>, ip: string, family: Family): string | null {
  for (const [reason, list] of lists) if (list.check(ip, family)) return reason
  return null
}

/** The eight 16-bit groups of an IPv6 address already known to be valid and without a zone index. */
function ipv6Groups(ip: string): number[] {
  let text = ip
  const tail: number[] = []
  if (text.includes('.')) {
    // A trailing dotted IPv4 part ("::ffff:127.0.0.1") is the last two groups.
    const lastColon = text.lastIndexOf(':')
    const [a = 0, b = 0, c = 0, d = 0] = text.slice(lastColon + 1).split('.').map(Number)
    tail.push((a << 8) | b, (c << 8) | d)
    text = text.slice(0, lastColon + 1)
    if (!text.endsWith('::')) text = text.slice(0, -1)
  }
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16)))
  const gap = text.indexOf('::')
  if (gap === -1) return [...parse(text), ...tail]
  const head = parse(text.slice(0, gap))
  const rest = [...parse(text.slice(gap + 2)), ...tail]
  return [...head, ...new Array<number>(8 - head.length - rest.length).fill(0), ...rest]
}

/** The IPv4 address an IPv6 address carries (see EMBEDDING), or null when it carries none. */
function embeddedIPv4(ip: string): string | null {
  for (const [list, group] of EMBEDDING_LISTS) {
    if (!list.check(ip, 'ipv6')) continue
    const groups = ipv6Groups(ip)
    const high = groups[group]!
    const low = groups[group + 1]!
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`
  }
  return null
}

/**
 * Why a webhook may not connect to `ip` (IPv4 or IPv6, as dns.lookup gives it or as a URL's host names it,
 * without brackets), as a short phrase such as "a loopback address"; null when it may. Anything that is not an
 * IP address is refused, so a caller that passes a host name by mistake fails closed.
 */
export function refusedAddress(ip: string): string | null {
  if (isIPv4(ip)) return firstReason(IPV4_LISTS, ip, 'ipv4')
  if (ip.includes('%')) return isIPv6(ip) ? 'a scoped address (with a zone index)' : 'not an IP address'
  if (!isIPv6(ip)) return 'not an IP address'
  const reason = firstReason(IPV6_LISTS, ip, 'ipv6')
  if (reason !== null) return reason
  const inner = embeddedIPv4(ip)
  return inner === null ? null : firstReason(IPV4_LISTS, inner, 'ipv4')
}
