// oidc-provider ships no type declarations; this is the little of its API the benchmark uses.
declare module 'oidc-provider' {
  import type { Server } from 'node:http'
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    listen(port: number, host: string, callback: () => void): Server
    on(event: string, listener: (...args: unknown[]) => void): this
  }
}
