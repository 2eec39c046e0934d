// The bounded GET of a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document
// §4, §6 on server-side request forgery): anyone may name any URL as a client id, so the request
// is the server's, made on a stranger's behalf, and bounded every way: a deadline, a size limit,
// no redirects followed (§4: the document is at the URL or nowhere), no private, loopback or
// link-local address unless the host is a localhost name, checked on the address actually
// connected to (a name that resolves to 10.0.0.1 is refused, however it is spelt), and a cap on
// the fetches in flight. node:https trusts Node's CAs, NODE_EXTRA_CA_CERTS included.
// The jwks_uri of a client a stranger described (client-keys.ts) is fetched the same way.
import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { BlockList, isIP } from 'node:net'
import { rootCertificates } from 'node:tls'
import { isLocalHost } from '../domain/redirect-uri.js'

export interface MetadataFetchOptions {
  /** Milliseconds from the start of the request to the last byte. */
  timeoutMs: number
  /** Bytes of body at most. */
  maxBytes: number
  /** Fetches in flight at once; one more fails at once. */
  maxConcurrent: number
  /** PEM certificates trusted besides Node's own (tests: a self-signed document server). */
  extraCa?: string | undefined
  /** What the fetched document is, in the reasons of a failure. */
  document?: string | undefined
  /** Sent as Accept. */
  accept?: string | undefined
  /** Resolves a host name to every address it has (tests: a name that resolves to 10.0.0.1). */
  resolve?: Resolver | undefined
}

export type Resolver = (
  hostname: string,
  options: LookupAllOptions,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void

export const METADATA_FETCH_DEFAULTS: MetadataFetchOptions = { timeoutMs: 5000, maxBytes: 64 * 1024, maxConcurrent: 10 }

/** What went wrong, as the error page says it (fixed sentences, never the document's content). */
export class MetadataFetchError extends Error {
  constructor(
    readonly reason: string,
    /** The fetch was not tried: too many were in flight (a fault of this server's load, not of the URL). */
    readonly busy = false,
  ) {
    super(reason)
    this.name = 'MetadataFetchError'
  }
}

export interface FetchedDocument {
  body: Buffer
  headers: IncomingMessage['headers']
}

export interface MetadataFetcher {
  get(url: URL): Promise<FetchedDocument>
}

/** Addresses a stranger's URL may not make us reach: RFC 6890 special-purpose blocks. */
const FORBIDDEN = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  FORBIDDEN.addSubnet(net, bits, 'ipv4')
for (const [net, bits] of [
  ['::', 127],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  FORBIDDEN.addSubnet(net, bits, 'ipv6')

/** Whether a stranger's URL may make us connect to this address. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !FORBIDDEN.check(address, 'ipv4')
  if (family !== 6) return false
  // An IPv4-mapped address (::ffff:a.b.c.d) is the IPv4 address it maps.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return isPublicAddress(mapped[1]!)
  return !FORBIDDEN.check(address, 'ipv6')
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

/** A connection's dns.lookup (node:http's `lookup` option). */
type Lookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void

/** dns.lookup that refuses what the connection would reach when any address of the name is not public. */
function publicOnlyLookup(resolve: Resolver): Lookup {
  return function lookup(hostname, options, callback) {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, [])
      if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address))) {
        return callback(Object.assign(new Error('address not allowed'), { code: 'EADDRNOTALLOWED' }), [])
      }
      if (options.all) return callback(null, addresses)
      callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }
}

export function createMetadataFetcher(options: Partial<MetadataFetchOptions> = {}): MetadataFetcher {
  const opts = { ...METADATA_FETCH_DEFAULTS, ...options }
  const lookup = publicOnlyLookup(opts.resolve ?? dnsLookup)
  let inFlight = 0
  return {
    async get(url) {
      if (inFlight >= opts.maxConcurrent)
        throw new MetadataFetchError('too many client metadata documents are being fetched: try again', true)
      inFlight++
      try {
        return await fetchOnce(url, opts, lookup)
      } finally {
        inFlight--
      }
    },
  }
}

function fetchOnce(url: URL, opts: MetadataFetchOptions, lookup: Lookup): Promise<FetchedDocument> {
  const name = opts.document ?? 'the client metadata document'
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const local = isLocalHost(url.hostname)
  if (!local && isIP(host) !== 0 && !isPublicAddress(host)) {
    return Promise.reject(new MetadataFetchError(`${name} is at an address that may not be reached`))
  }
  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (reason: string) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      req.destroy()
      reject(new MetadataFetchError(reason))
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const req = send(url, {
      method: 'GET',
      headers: { accept: opts.accept ?? 'application/json' },
      agent: false,
      ...(opts.extraCa !== undefined ? { ca: [...rootCertificates, opts.extraCa] } : {}),
      ...(local ? {} : { lookup }),
    })
    const timer = setTimeout(() => fail(`${name} did not arrive in time`), opts.timeoutMs)
    req.on('error', (err: NodeJS.ErrnoException) =>
      fail(err.code === 'EADDRNOTALLOWED' ? `${name} is at an address that may not be reached` : `${name} could not be fetched`),
    )
    req.on('response', (res) => {
      const status = res.statusCode ?? 0
      if (status >= 300 && status < 400) return fail(`${name} URL redirects: redirects are not followed`)
      if (status !== 200) return fail(`${name} URL did not answer 200 OK`)
      const declared = Number(res.headers['content-length'])
      if (Number.isFinite(declared) && declared > opts.maxBytes) return fail(tooLarge(name, opts.maxBytes))
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > opts.maxBytes) return fail(tooLarge(name, opts.maxBytes))
        chunks.push(chunk)
      })
      res.on('error', () => fail(`${name} could not be fetched`))
      res.on('end', () => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        resolve({ body: Buffer.concat(chunks), headers: res.headers })
      })
    })
    req.end()
  })
}

const tooLarge = (name: string, max: number) => `${name} is larger than ${Math.floor(max / 1024)} KiB`
