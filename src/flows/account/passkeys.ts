// The account page's passkeys: the list (name, when added, last use, synced or on one device), "Add
// a passkey" (a WebAuthn registration, src/interaction/passkeys.ts) and "Remove". Adding one
// leaves the person's other sessions as they were; removing one ends them (whoever could use it
// may have signed in with it elsewhere), the session it was removed in stays.
import { hasControlOrFormatCharacters } from '../../grants/acr-values.js'
import type { PasskeyContext, Passkeys } from '../../interaction/passkeys.js'
import type { Session, SessionService } from '../../interaction/session.js'
import { PASSKEY_NAME_MAX } from '../../stores/passkeys.js'
import { describeDevice } from './device.js'

export interface PasskeyItemView {
  credentialId: string
  name: string
  /** ms */
  createdAt: number
  lastUsedAt: number | undefined
  /** Backup eligible: synced across the person's devices. */
  synced: boolean
}

export interface PasskeysView {
  items: PasskeyItemView[]
  /** The registration options (JSON) for "Add a passkey"; undefined when passkeys are not offered. */
  options: string | undefined
}

export type PasskeyAddFailure = 'no_script' | 'bad_name' | 'failed' | 'duplicate'

export type PasskeyAddResult = { ok: true; name: string } | { ok: false; failure: PasskeyAddFailure }

/** The name of a passkey left unnamed: the browser and system it was added in, as the sessions list names them. */
export function defaultPasskeyName(userAgent: string | undefined): string {
  const d = describeDevice(userAgent)
  return [d.browser, d.system].filter((x) => x !== undefined).join(' · ') || 'Passkey'
}

export function createAccountPasskeys(deps: { passkeys: Passkeys; sessions: Pick<SessionService, 'endOthers'> }) {
  const { passkeys } = deps
  return {
    async view(session: Session, displayName: string | undefined): Promise<PasskeysView | undefined> {
      const items = await passkeys.list(session.subjectId)
      // Where passkeys are not offered, the section shows only while there are some to remove.
      if (!passkeys.available && items.length === 0) return undefined
      return {
        items: items.map((p) => ({
          credentialId: p.credentialId,
          name: p.name,
          createdAt: p.createdAt,
          lastUsedAt: p.lastUsedAt,
          synced: p.backupEligible,
        })),
        options: passkeys.available ? JSON.stringify(await passkeys.registrationOptions({ ...session, displayName })) : undefined,
      }
    },

    async add(
      session: Session,
      form: { webauthn_response?: string | undefined; passkey_name?: string | undefined },
      userAgent: string | undefined,
      ctx: PasskeyContext,
    ): Promise<PasskeyAddResult> {
      const typed = (form.passkey_name ?? '').trim()
      if (typed.length > PASSKEY_NAME_MAX || hasControlOrFormatCharacters(typed)) return { ok: false, failure: 'bad_name' }
      if (!form.webauthn_response) return { ok: false, failure: 'no_script' }
      const name = typed || defaultPasskeyName(userAgent)
      const result = await passkeys.register(session, form.webauthn_response, name, ctx)
      if (!result.ok) return { ok: false, failure: result.reason === 'duplicate' ? 'duplicate' : 'failed' }
      return { ok: true, name: result.passkey.name }
    },

    /** The removed passkey's name and how many other sessions ended; undefined when the person has no such passkey. */
    async remove(
      session: Session,
      credentialId: string,
      ctx: PasskeyContext,
    ): Promise<{ name: string; sessionsEnded: number } | undefined> {
      const removed = await passkeys.remove(session.subjectId, credentialId, ctx)
      if (!removed) return undefined
      return { name: removed.name, sessionsEnded: await deps.sessions.endOthers(session, 'logout') }
    },
  }
}

export type AccountPasskeys = ReturnType<typeof createAccountPasskeys>
