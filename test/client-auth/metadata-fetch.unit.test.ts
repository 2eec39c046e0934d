// The bounded fetch of a stranger's URL without the network: the resolver is injected, so a host
// name that resolves to a private address is refused on the address it resolves to (however the
// name is spelt), and the cap on fetches in flight refuses the one more at once, not later.
import type { LookupAddress } from 'node:dns'
import { describe, expect, it } from 'vitest'
import { createMetadataFetcher, MetadataFetchError, type Resolver } from '../../src/client-auth/metadata-fetch.js'

const NOT_REACHED = 'the client metadata document is at an address that may not be reached'

/** A resolver that answers every name with `addresses`, and records the names asked. */
function resolvingTo(...addresses: string[]) {
  const asked: string[] = []
  const resolve: Resolver = (hostname, _options, callback) => {
    asked.push(hostname)
    callback(
      null,
      addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })),
    )
  }
  return { asked, resolve }
}

async function failure(promise: Promise<unknown>): Promise<MetadataFetchError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(MetadataFetchError)
  return err as MetadataFetchError
}

describe('a host name that resolves to an address a stranger may not make us reach', () => {
  it.each([
    ['a private address', ['10.0.0.1']],
    ['the cloud metadata address', ['169.254.169.254']],
    ['loopback', ['127.0.0.1']],
    ['IPv6 loopback', ['::1']],
    ['an IPv4-mapped private address', ['::ffff:192.168.1.1']],
    ['one private address among public ones', ['93.184.215.14', '10.0.0.1']],
    ['no address at all', []],
  ])('is refused when it resolves to %s, before any connection', async (_what, addresses) => {
    const { asked, resolve } = resolvingTo(...addresses)
    const fetcher = createMetadataFetcher({ resolve })
    const err = await failure(fetcher.get(new URL('https://agent.example.com/client.json')))
    expect(err.reason).toBe(NOT_REACHED)
    expect(asked).toEqual(['agent.example.com'])
  })

  it('is refused for the jwks_uri of such a client in the same words, naming what was fetched', async () => {
    const { resolve } = resolvingTo('172.16.0.5')
    const fetcher = createMetadataFetcher({ resolve, document: "the client's jwks_uri" })
    const err = await failure(fetcher.get(new URL('https://keys.agent.example.com/jwks.json')))
    expect(err.reason).toBe("the client's jwks_uri is at an address that may not be reached")
  })
})

describe('the cap on fetches in flight', () => {
  it('refuses the eleventh fetch at once while ten are in flight, and takes one again when they end', async () => {
    // Ten fetches wait in name resolution until released, then resolve to a private address.
    const held: Array<() => void> = []
    let asked = 0
    const resolve: Resolver = (_hostname, _options, callback) => {
      asked++
      held.push(() => callback(null, [{ address: '10.0.0.1', family: 4 }]))
    }
    const fetcher = createMetadataFetcher({ resolve })
    const url = (i: number) => new URL(`https://agent${i}.example.com/client.json`)
    const inFlight = Array.from({ length: 10 }, (_, i) => failure(fetcher.get(url(i))))
    await expect.poll(() => held.length).toBe(10)

    const busy = await failure(fetcher.get(url(10)))
    expect(busy.reason).toBe('too many client metadata documents are being fetched: try again')
    expect(busy.busy).toBe(true)
    expect(asked).toBe(10)

    for (const release of held.splice(0)) release()
    for (const err of await Promise.all(inFlight)) expect(err.reason).toBe(NOT_REACHED)

    const next = failure(fetcher.get(url(11)))
    await expect.poll(() => held.length).toBe(1)
    held.pop()!()
    expect((await next).reason).toBe(NOT_REACHED)
    expect(asked).toBe(11)
  })
})
