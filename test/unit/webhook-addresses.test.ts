// Which addresses a webhook may connect to: every refused range, its edges,
// and the IPv6 forms that carry an IPv4 address judged by that address.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { refusedAddress } from '../../src/webhooks/addresses.js'

const REFUSED: ReadonlyArray<readonly [string, string]> = [
  // IPv4
  ['127.0.0.1', 'a loopback address'],
  ['127.255.255.254', 'a loopback address'],
  ['10.0.0.1', 'a private address'],
  ['10.255.255.255', 'a private address'],
  ['172.16.0.1', 'a private address'],
  ['172.31.255.255', 'a private address'],
  ['192.168.1.1', 'a private address'],
  ['169.254.0.1', 'a link-local address'],
  ['169.254.169.254', 'the cloud metadata address'],
  ['100.64.0.1', 'a shared (carrier-grade NAT) address'],
  ['100.127.255.255', 'a shared (carrier-grade NAT) address'],
  ['100.100.100.200', 'a shared (carrier-grade NAT) address'],
  ['224.0.0.1', 'a multicast address'],
  ['239.255.255.250', 'a multicast address'],
  ['0.0.0.0', 'an unspecified address'],
  ['0.1.2.3', 'an unspecified address'],
  ['255.255.255.255', 'the broadcast address'],
  ['198.18.0.1', 'a benchmarking address'],
  ['198.19.255.255', 'a benchmarking address'],
  ['240.0.0.1', 'a reserved address'],
  ['192.0.0.8', 'a reserved address'],
  ['192.88.99.1', 'a reserved address'],
  ['192.0.2.10', 'a documentation address'],
  ['198.51.100.7', 'a documentation address'],
  ['203.0.113.99', 'a documentation address'],
  // IPv6
  ['::1', 'a loopback address'],
  ['0:0:0:0:0:0:0:1', 'a loopback address'],
  ['::', 'an unspecified address'],
  ['fc00::1', 'a private address'],
  ['fd12:3456:789a::1', 'a private address'],
  ['fd00:ec2::254', 'the cloud metadata address'],
  ['fec0::1', 'a private address'],
  ['fe80::1', 'a link-local address'],
  ['febf:ffff::1', 'a link-local address'],
  ['ff02::1', 'a multicast address'],
  ['ff0e::101', 'a multicast address'],
  ['100::1', 'a discard-only address'],
  ['2001:db8::1', 'a documentation address'],
  ['3fff::1', 'a documentation address'],
  ['2001:2::1', 'a benchmarking address'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'a Teredo tunnel address'],
  ['64:ff9b:1::a00:1', 'a private address'],
  // IPv6 carrying a refused IPv4 address: judged by it.
  ['::ffff:127.0.0.1', 'a loopback address'],
  ['::ffff:7f00:1', 'a loopback address'],
  ['::FFFF:7F00:0001', 'a loopback address'],
  ['0:0:0:0:0:ffff:7f00:1', 'a loopback address'],
  ['::ffff:10.1.2.3', 'a private address'],
  ['::ffff:a9fe:a9fe', 'the cloud metadata address'],
  ['::ffff:169.254.169.254', 'the cloud metadata address'],
  ['::127.0.0.1', 'a loopback address'],
  ['::7f00:1', 'a loopback address'],
  ['::192.168.0.1', 'a private address'],
  ['::0.0.0.2', 'an unspecified address'],
  ['::ffff:0:127.0.0.1', 'a loopback address'],
  ['64:ff9b::127.0.0.1', 'a loopback address'],
  ['64:ff9b::7f00:1', 'a loopback address'],
  ['64:ff9b::a9fe:a9fe', 'the cloud metadata address'],
  ['64:ff9b::c0a8:101', 'a private address'],
  ['2002:7f00:1::', 'a loopback address'],
  ['2002:c0a8:101::1', 'a private address'],
  ['2002:a9fe:a9fe:1::1', 'the cloud metadata address'],
  // Not an address at all, or scoped to one link.
  ['fe80::1%eth0', 'a scoped address (with a zone index)'],
  ['localhost', 'not an IP address'],
  ['2130706433', 'not an IP address'],
  ['0177.0.0.1', 'not an IP address'],
  ['[::1]', 'not an IP address'],
  ['', 'not an IP address'],
]

const ALLOWED = [
  '1.1.1.1',
  '8.8.8.8',
  '93.184.215.14',
  '9.255.255.255', // just below 10/8
  '11.0.0.0', // just above it
  '172.15.255.255', // just below 172.16/12
  '172.32.0.0', // just above it
  '100.63.255.255', // just below 100.64/10
  '100.128.0.0', // just above it
  '169.253.255.255',
  '198.17.255.255', // just below 198.18/15
  '198.20.0.0', // just above it
  '223.255.255.255', // just below multicast
  '192.0.1.255',
  '192.169.0.0',
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2a00:1450:4001:80b::200e',
  '2620:fe::fe',
  '::ffff:1.1.1.1',
  '::ffff:808:808',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '::8.8.8.8',
]

test('refused addresses, each with its reason', () => {
  for (const [ip, reason] of REFUSED) assert.equal(refusedAddress(ip), reason, ip)
})

test('public addresses are allowed, up to the edges of the refused ranges', () => {
  for (const ip of ALLOWED) assert.equal(refusedAddress(ip), null, ip)
})
