// Who "one client" is when downloads are counted once per client, version and
// UTC day: an IPv4 address however the socket spells it (a dual-stack server
// sees 192.0.2.9 as ::ffff:192.0.2.9), and an IPv6 client by its /64, which a
// single host may fill with as many addresses as it likes. Through
// app.inject's remoteAddress, and through a real dual-stack server reached
// over the IPv6 and IPv4 loopbacks.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { siteWith, type TestSite, type TestUser } from '../helpers/app.js'
import { pathOf, publishPack, type PackJson } from '../helpers/packs.js'

/** The timer never fires within a test: each test flushes when it means to. */
const NO_TIMER = { flushIntervalMs: 3_600_000 }

let site: TestSite
let alice: TestUser
before(async () => {
  ;({ site, alice } = await siteWith({ users: ['alice'], downloads: NO_TIMER }))
})
after(() => site.close())

async function downloadFrom(pack: PackJson, remoteAddress: string): Promise<void> {
  const res = await site.app.inject({ url: pathOf(pack.versions[0]!.download_url), remoteAddress, headers: site.gate })
  assert.equal(res.statusCode, 200, res.body.slice(0, 200))
}

async function downloads(pack: PackJson): Promise<number> {
  await site.app.downloads.flush()
  const res = await site.app.inject({ url: `/api/packs/${pack.namespace}/${pack.pack_id}/`, headers: site.gate })
  assert.equal(res.statusCode, 200, res.body)
  return (res.json() as PackJson).downloads
}

describe('one client per download count', () => {
  test('the addresses of one IPv6 /64 count once; another /64 counts apart', async () => {
    const pack = await publishPack(site, alice, { title: 'Six Four' })
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:DB8:1:2:0:0:0:abcd', '2001:db8:1:2::7%eth0']) {
      await downloadFrom(pack, address)
    }
    assert.equal(await downloads(pack), 1, 'five addresses of 2001:db8:1:2::/64 are one client')
    await downloadFrom(pack, '2001:db8:1:3::1')
    assert.equal(await downloads(pack), 2, 'the next /64 is another client')
    // After the marks are written, too: the database's mark is the /64's.
    await downloadFrom(pack, '2001:db8:1:2::99')
    assert.equal(await downloads(pack), 2)
  })

  test('an IPv4 address counts once whether it arrives as 192.0.2.9 or as ::ffff:192.0.2.9', async () => {
    const pack = await publishPack(site, alice, { title: 'Mapped' })
    await downloadFrom(pack, '192.0.2.9')
    await downloadFrom(pack, '::ffff:192.0.2.9')
    await downloadFrom(pack, '::ffff:c000:209')
    assert.equal(await downloads(pack), 1)
    // Written, then seen again in the other spelling.
    await downloadFrom(pack, '::FFFF:192.0.2.9')
    assert.equal(await downloads(pack), 1)
    await downloadFrom(pack, '192.0.2.10')
    assert.equal(await downloads(pack), 2, 'the next IPv4 address is another client')
  })

  test('a real dual-stack server: ::1 counts once, and 127.0.0.1 (seen as ::ffff:127.0.0.1) is the IPv4 client 127.0.0.1', async (t) => {
    const pack = await publishPack(site, alice, { title: 'Loopbacks' })
    await site.app.listen({ port: 0, host: '::' }).catch((error: unknown) => t.skip(`no IPv6 here: ${String(error)}`))
    if (!site.app.server.listening) return
    const address = site.app.server.address()
    assert.ok(address && typeof address === 'object')
    const path = pathOf(pack.versions[0]!.download_url)
    for (const host of ['[::1]', '[::1]', '127.0.0.1']) {
      const res = await fetch(`http://${host}:${address.port}${path}`, { headers: site.gate })
      assert.equal(res.status, 200)
      await res.arrayBuffer()
    }
    assert.equal(await downloads(pack), 2, '::1 twice is one client, 127.0.0.1 another')
    // The dual-stack socket reported 127.0.0.1 as ::ffff:127.0.0.1; the plain spelling is the same client.
    await downloadFrom(pack, '127.0.0.1')
    assert.equal(await downloads(pack), 2)
  })
})
