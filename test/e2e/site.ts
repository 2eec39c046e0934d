// The other side of an end-to-end test: a relying party's web server, or another site's. It
// listens on 127.0.0.1 at a port of its own and is reached as http://localhost:<port>, another
// host than our server's default 127.0.0.1: cookies are per host, not per port, so the two keep
// their cookies apart as on two sites.
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Site {
  server: Server
  /** http://localhost:<port> */
  origin: string
  close(): Promise<void>
}

/**
 * Starts listening at once. Without a handler, a test attaches its app later
 * (`site.server.on('request', app)`): an app whose configuration names the issuer, when the
 * issuer's seed names the app's origin first.
 */
export async function startSite(handler?: RequestListener): Promise<Site> {
  const server = handler ? createServer(handler) : createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  return {
    server,
    origin: `http://localhost:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  }
}
