// autocannon ships no type declarations; this is the part of its programmatic API the benchmark uses.
declare module 'autocannon' {
  interface Options {
    url: string
    connections?: number
    duration?: number
    method?: 'GET' | 'POST'
    headers?: Record<string, string>
    body?: string
    timeout?: number
    /** Requests per second across all connections (a steady rate instead of as fast as possible). */
    overallRate?: number
    /** setupRequest is called before every request: it may change the body. */
    requests?: Array<{ setupRequest: (req: { body?: string | Buffer }) => { body?: string | Buffer } }>
  }
  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total: number
    p50: number
    p99: number
  }
  interface Result {
    requests: Histogram
    latency: Histogram
    errors: number
    timeouts: number
    non2xx: number
    duration: number
    statusCodeStats: Record<string, { count: number }>
  }
  function autocannon(opts: Options): Promise<Result>
  export default autocannon
}
