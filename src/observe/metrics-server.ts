// The metrics listener: GET /metrics in the Prometheus text format on METRICS_HOST:METRICS_PORT,
// a socket of its own so that the public listener never serves it (a reverse proxy forwarding
// everything to PORT cannot leak it). Nothing else is served there.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'

export interface MetricsListener {
  /** Starts listening; resolves to the bound address (port 0: a free one). */
  listen(port: number, host: string): Promise<AddressInfo>
  address(): AddressInfo | undefined
  close(): Promise<void>
}

export function createMetricsListener(registry: Registry, onError: (err: unknown) => void): MetricsListener {
  let server: Server | undefined
  const handler = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
    const path = (req.url ?? '').split('?')[0]
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n')
      return
    }
    registry.metrics().then(
      (text) =>
        res
          .writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' })
          .end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        onError(err)
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n')
      },
    )
  }
  return {
    async listen(port, host) {
      const s = createServer(handler)
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject)
        s.listen(port, host, () => {
          s.off('error', reject)
          resolve()
        })
      })
      server = s
      return s.address() as AddressInfo
    },
    address: () => (server?.address() as AddressInfo | null) ?? undefined,
    async close() {
      const s = server
      server = undefined
      if (!s) return
      s.closeAllConnections()
      await new Promise<void>((resolve) => s.close(() => resolve()))
    },
  }
}
