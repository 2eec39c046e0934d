// Store interface, named with domain verbs: it returns undefined when nothing is found; the
// implementation beside it (users.postgres.ts) is the SQL. Times are milliseconds since the epoch from
// the caller (the injected Clock), never SQL now(), so that tests control protocol time.
import type { User } from '../domain/types.js'

export interface UserStore {
  findBySubjectId(subjectId: string): Promise<User | undefined>
  /** Whether the user with this subject is enabled; undefined when there is none (the token check's cheap lookup). */
  isEnabled(subjectId: string): Promise<boolean | undefined>
  findByUsername(username: string): Promise<User | undefined>
  /** CIBA login_hint: a username, a subject id or an e-mail address (case-insensitive). */
  findByLoginHint(hint: string): Promise<User | undefined>
  /** Creates or replaces the user with this username (admin CLI). */
  upsert(user: User): Promise<void>
  /** Every user by username (admin CLI). */
  list(): Promise<User[]>
  /** Replaces the user's password hash (a person changing their own password); false when there is no such subject. */
  setPasswordHash(subjectId: string, passwordHash: string): Promise<boolean>
  /** Enables or disables the user; false when there is no such username. */
  setEnabled(username: string, enabled: boolean): Promise<boolean>
  /** Deletes the user (sessions and consents go with it); false when there is none. */
  remove(username: string): Promise<boolean>
}
