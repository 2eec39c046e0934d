// id_token_hint (OIDC Core §3.1.2.1, RP-Initiated Logout 1.0 §2): an ID token we issued, presented
// back as a hint about who the person is. Its signature and issuer are checked; an expired one is
// still a valid hint (the specs say so: the point is who, not when).
import type { SigningKeyService } from '../keys/signing-keys.js'

export interface IdTokenHint {
  sub: string
  /** The clients it was issued to (`aud`). */
  audiences: string[]
  /** The session it was issued in, when it names one. */
  sid: string | undefined
}

/** The hint's claims, or undefined when it is not an ID token of ours. */
export async function readIdTokenHint(
  keys: Pick<SigningKeyService, 'verify'>,
  issuer: string,
  hint: string,
): Promise<IdTokenHint | undefined> {
  let payload
  try {
    ;({ payload } = await keys.verify(hint, { typ: 'JWT' })) // our ID tokens; never an access token
  } catch {
    return undefined
  }
  const aud = Array.isArray(payload.aud) ? payload.aud : [payload.aud]
  if (payload.iss !== issuer || typeof payload.sub !== 'string') return undefined
  return {
    sub: payload.sub,
    audiences: aud.filter((a): a is string => typeof a === 'string'),
    sid: typeof payload.sid === 'string' ? payload.sid : undefined,
  }
}
