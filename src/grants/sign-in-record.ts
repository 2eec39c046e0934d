// What a grant keeps of the sign-in that approved it, from the session until its tokens are
// issued: auth_time (OIDC Core §2), amr (RFC 8176) and idp, the identity provider the sign-in went
// through. Every flow in which a person approves (authorization code, device, CIBA) takes it from
// the session here and puts it into the tokens here, so a sign-in through an upstream provider
// reads the same in the tokens of every flow.
import type { SignInRecord } from '../domain/types.js'
import type { StoredSession } from '../stores/user-sessions.js'

export type { SignInRecord }

/**
 * The sign-in of `session`. `asked`: the provider the request named (acr_values idp:), kept for a
 * local sign-in (idp:local); a federated session's own provider always wins, as it is where the
 * person signed in (a request naming one is only approved after a sign-in there).
 */
export function signInRecord(session: Pick<StoredSession, 'authTime' | 'amr' | 'idp'>, asked?: string): SignInRecord {
  return { authTime: session.authTime, amr: session.amr, idp: session.idp ?? asked }
}

/** The sign-in as both tokens carry it: auth_time in seconds, amr, and the idp claim when there is one. */
export function issuedSignIn(r: SignInRecord): { authTime: number; amr: string[]; idpClaim: { idp?: string } } {
  return { authTime: Math.floor(r.authTime / 1000), amr: r.amr, idpClaim: r.idp === undefined ? {} : { idp: r.idp } }
}
