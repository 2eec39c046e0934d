// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (pushed-requests.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.

/** An authorization request held for its request_uri (RFC 9126 §2.2). */
export interface PushedRequest {
  clientId: string
  /** The authorization parameters, validated when it was stored. */
  params: Array<[string, string]>
  /** It came through the pushed authorization request endpoint (not a request object sent by value). */
  viaPar: boolean
  /** It came from a signed request object (RFC 9101). */
  signed: boolean
  expiresAt: number
  /** When a code was issued from it: it is used up. */
  usedAt: number | undefined
}

export type NewPushedRequest = Omit<PushedRequest, 'usedAt'> & {
  /** The raw handle of the request_uri; only its hash is stored. */
  handle: string
  createdAt: number
}

export interface PushedRequestStore {
  create(req: NewPushedRequest): Promise<void>
  find(handle: string): Promise<PushedRequest | undefined>
  /**
   * find, and on the first arrival at the authorization endpoint (while unexpired at `now`) the
   * expiry moves out to `now + windowMs` at least: the time the person has to sign in and decide.
   * One statement, so concurrent first arrivals extend it once.
   */
  open(handle: string, now: number, windowMs: number): Promise<PushedRequest | undefined>
  /** Marks it used when a code is issued from it; false when it was used already or expired at `now`. */
  use(handle: string, now: number): Promise<boolean>
  removeExpired(before: number, limit: number): Promise<number>
}
