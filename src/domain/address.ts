// The unit a per-address throttle counts. One IPv4 address is one unit; an IPv6 host is counted
// by its /64, the smallest prefix a subscriber is given (RFC 6177, RFC 7421 §1): it picks any
// interface identifier inside it at will (RFC 8981), so a per-address count alone would not bound
// it. An IPv4-mapped address (::ffff:a.b.c.d, RFC 4291 §2.5.5.2, what a dual-stack listener
// reports for an IPv4 peer) is the IPv4 address it maps.
import { isIPv6 } from 'node:net'

export function throttleAddress(ip: string): string {
  // Every IPv6 address has a colon and no IPv4 one does: most callers skip isIPv6's long regex.
  if (!ip.includes(':') || !isIPv6(ip)) return ip
  const h = hextets(ip.split('%')[0]!)
  if (h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff) return `${h[6]! >> 8}.${h[6]! & 255}.${h[7]! >> 8}.${h[7]! & 255}`
  return `${h
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing IPv4 part split). */
function hextets(ip: string): number[] {
  const groups = (s: string) => (s === '' ? [] : s.split(':').flatMap((g) => (g.includes('.') ? v4Groups(g) : [parseInt(g, 16)])))
  const [head = '', tail] = ip.split('::')
  const left = groups(head)
  const right = tail === undefined ? [] : groups(tail)
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right]
}

function v4Groups(v4: string): number[] {
  const [a = 0, b = 0, c = 0, d = 0] = v4.split('.').map(Number)
  return [(a << 8) | b, (c << 8) | d]
}
