// Store interface of the clients that registered themselves (RFC 7591, RFC 7592) and of the
// initial access tokens that may be required to register (RFC 7591 §3): every token is given as
// presented and kept only as its SHA-256. Times are milliseconds since the epoch from the caller.
import type { Client } from '../domain/types.js'

export interface Registration {
  clientId: string
  /** The client metadata as registered (RFC 7591 §2, wire names), as a read answers it. */
  metadata: Record<string, unknown>
  createdAt: number
  lastUsedAt: number
}

export interface ClientRegistrationStore {
  /** Adds the client (marked self-registered), its secrets and its registration, all or nothing. */
  create(client: Client, registration: { accessToken: string; metadata: Record<string, unknown>; createdAt: number }): Promise<void>
  /** The registration of `clientId` whose registration access token is `accessToken`. */
  findByAccessToken(clientId: string, accessToken: string): Promise<Registration | undefined>
  /**
   * Replaces the client (its secrets kept) and its metadata and rotates the registration access
   * token, only while `previousToken` is still the current one: false when it no longer is.
   */
  update(client: Client, change: { previousToken: string; accessToken: string; metadata: Record<string, unknown> }): Promise<boolean>
  /** Deletes the client, its secrets, consents and registration; false when there was none. */
  remove(clientId: string): Promise<boolean>
  /** Records a use of the client (a token issued to it); written at most once an hour. */
  touch(clientId: string, now: number): Promise<void>
  /** Deletes at most `limit` self-registered clients last used before `before`; returns how many. */
  removeIdle(before: number, limit: number): Promise<number>
}

export interface InitialAccessToken {
  id: string
  description: string | undefined
  createdAt: number
  expiresAt: number
  /** Registrations it may make; undefined: any number until it expires. */
  maxUses: number | undefined
  uses: number
  revokedAt: number | undefined
}

export interface RegistrationTokenStore {
  create(token: { id: string; token: string; description?: string; createdAt: number; expiresAt: number; maxUses?: number }): Promise<void>
  list(): Promise<InitialAccessToken[]>
  /** Revokes it; false when there is no such token or it was revoked already. */
  revoke(id: string, now: number): Promise<boolean>
  /** Whether `token` may register now (unrevoked, unexpired, uses left), without using it. */
  isUsable(token: string, now: number): Promise<boolean>
  /** Counts one use, in one statement: false when it is no longer usable (raced, revoked, used up). */
  use(token: string, now: number): Promise<boolean>
}
