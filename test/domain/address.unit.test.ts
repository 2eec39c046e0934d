import { describe, expect, it } from 'vitest'
import { throttleAddress } from '../../src/domain/address.js'

describe('throttleAddress', () => {
  it('IPv4 stays itself; IPv4-mapped IPv6 is its IPv4 address', () => {
    expect(throttleAddress('192.0.2.7')).toBe('192.0.2.7')
    expect(throttleAddress('::ffff:192.0.2.7')).toBe('192.0.2.7')
    expect(throttleAddress('::FFFF:c000:0207')).toBe('192.0.2.7')
  })

  it('IPv6 is its /64, however the address is written', () => {
    for (const ip of ['2001:db8:1:2::1', '2001:DB8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002:0:0:0:9', '2001:db8:1:2::1%eth0']) {
      expect(throttleAddress(ip)).toBe('2001:db8:1:2::/64')
    }
    expect(throttleAddress('::1')).toBe('0:0:0:0::/64')
    expect(throttleAddress('2001:db8::')).toBe('2001:db8:0:0::/64')
    expect(throttleAddress('64:ff9b::192.0.2.7')).toBe('64:ff9b:0:0::/64')
  })
})
