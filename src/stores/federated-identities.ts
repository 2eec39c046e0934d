// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (federated-identities.postgres.ts) is the SQL. Times are milliseconds
// since the epoch from the caller (the injected Clock), never SQL now().
import type { User } from '../domain/types.js'

/** A local user linked to an upstream identity (scheme, upstream sub). */
export interface FederatedIdentity {
  scheme: string
  upstreamSub: string
  subjectId: string
  /** The user was created by this link: its profile claims follow the upstream's. */
  managesClaims: boolean
  createdAt: number
  lastSignInAt: number
}

/** Federation requests (state sent upstream, not yet back): the state and browser binding as hashes. */
export interface FederationRequest {
  scheme: string
  nonce: string
  codeVerifier: string
  returnTo: string | undefined
  createdAt: number
  expiresAt: number
}

export interface FederatedIdentityStore {
  /** The link and its user, or undefined. */
  find(scheme: string, upstreamSub: string): Promise<{ link: FederatedIdentity; user: User } | undefined>
  /**
   * Creates the user and its link in one statement; undefined when the upstream identity was
   * linked meanwhile (a concurrent first sign-in) or the username is taken: the caller looks again.
   */
  createLinkedUser(user: User, link: { scheme: string; upstreamSub: string; at: number }): Promise<boolean>
  /** Links an existing local user (linkByVerifiedEmail); false when the identity is linked already. */
  link(subjectId: string, link: { scheme: string; upstreamSub: string; at: number }): Promise<boolean>
  /** Records a sign-in; replaces the user's claims when `claims` is given (a user the link manages). */
  signedIn(scheme: string, upstreamSub: string, at: number, claims: Record<string, unknown> | undefined): Promise<void>
  /** The local users whose email claim is `email` (case-insensitive), at most two. */
  findUsersByEmail(email: string): Promise<User[]>
  /** Every link of a user (admin CLI). */
  listForSubject(subjectId: string): Promise<FederatedIdentity[]>

  /** Stores a request sent upstream; `state` and `browser` are kept only as hashes. */
  saveRequest(state: string, browser: string, r: FederationRequest): Promise<void>
  /**
   * Consumes the request of `state` for `scheme` if the same browser started it, it has not
   * expired at `now` and was never used: one statement, so a state works once.
   */
  consumeRequest(scheme: string, state: string, browser: string, now: number): Promise<FederationRequest | undefined>
  removeExpiredRequests(before: number, limit: number): Promise<number>
}
