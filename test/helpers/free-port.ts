// A TCP port free on 127.0.0.1 right now: for an app whose issuer must name its own listening
// address, so the port is chosen before the app is built.
import { createServer } from 'node:net'

export async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()))
  const port = (probe.address() as { port: number }).port
  await new Promise<void>((r) => probe.close(() => r()))
  return port
}
