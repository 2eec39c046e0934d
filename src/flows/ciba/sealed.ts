// What a ping or push delivery needs that must not lie in a database dump in clear: the
// auth_req_id (otherwise stored only as a hash), the client_notification_token (CIBA Core §7.1, a
// bearer credential the client gave us) and, for push, the tokens (§10.3.1). Sealed with
// KEY_ENCRYPTION_SECRET when it is set (AES-256-GCM, src/keys/key-crypto.ts), bound to the CIBA
// request's id so that a value copied onto another row does not open; without the secret kept as
// plain JSON, as signing keys are (docs/operate.md says to set it in production).
import { decryptAtRest, deriveKeyEncryptionKey, encryptAtRest } from '../../keys/key-crypto.js'

export interface Sealer {
  seal(value: unknown, requestId: string, what: 'secret' | 'payload'): string
  /** Throws when the value was sealed with another KEY_ENCRYPTION_SECRET, or with one and none is set now. */
  open<T>(stored: string, requestId: string, what: 'secret' | 'payload'): T
}

const aad = (requestId: string, what: string) => `ciba-delivery:${what}:${requestId}`

export function createSealer(keyEncryptionSecret: string | undefined): Sealer {
  const key = keyEncryptionSecret === undefined ? undefined : deriveKeyEncryptionKey(keyEncryptionSecret)
  return {
    seal(value, requestId, what) {
      const json = JSON.stringify(value)
      return key ? encryptAtRest(json, key, aad(requestId, what)) : json
    },
    open<T>(stored: string, requestId: string, what: 'secret' | 'payload'): T {
      // Plain JSON starts with "{"; the encrypted form with its version ("v1.").
      if (stored.startsWith('{')) return JSON.parse(stored) as T
      if (!key) throw new Error(`CIBA delivery ${what} is encrypted and KEY_ENCRYPTION_SECRET is not set`)
      return JSON.parse(decryptAtRest(stored, key, aad(requestId, what), `CIBA delivery ${what}`)) as T
    },
  }
}

/** What delivery_secret holds. */
export interface DeliverySecret {
  authReqId: string
  notificationToken: string
}
