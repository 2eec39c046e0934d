// Fetch metadata (W3C Fetch Metadata Request Headers): every current browser says in
// Sec-Fetch-Site which site started a request. Non-browsers may send anything, so the header only
// ever makes a request count for less, never for more.
import type { FastifyRequest } from 'fastify'

/** A page of another site started this request (a link, an auto-submitted form, an image); a sibling subdomain counts as another site. */
export function fromAnotherSite(req: FastifyRequest): boolean {
  const site = req.headers['sec-fetch-site']
  return site === 'cross-site' || site === 'same-site'
}
