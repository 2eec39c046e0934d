// The acr a passkey sign-in reaches: `phr`, phishing-resistant (OpenID Connect EAP ACR Values 1.0
// §2), when the session's methods (RFC 8176) include a key bound to this origin: `hwk` (a
// device-bound passkey) or `swk` (a synced one). WebAuthn signs the origin, so a look-alike site
// can neither use nor relay it.
export const PHISHING_RESISTANT_ACR = 'phr'

/** `phr` when the methods include a passkey, else undefined (the caller's own acr stands). */
export function passkeyAcr(amr: readonly string[]): string | undefined {
  return amr.includes('hwk') || amr.includes('swk') ? PHISHING_RESISTANT_ACR : undefined
}
