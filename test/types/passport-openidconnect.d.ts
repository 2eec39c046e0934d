// The package ships no types (and there is no @types package for 0.1): the parts the tests use,
// as its README and lib/strategy.js describe them.
declare module 'passport-openidconnect' {
  export interface StrategyOptions {
    issuer: string
    authorizationURL: string
    tokenURL: string
    userInfoURL?: string
    clientID: string
    clientSecret: string
    callbackURL: string
    scope?: string | string[]
  }

  /** The normalized profile (https://www.passportjs.org/reference/normalized-profile/). */
  export interface Profile {
    id: string
    displayName?: string
    username?: string
    name?: { familyName?: string; givenName?: string; middleName?: string }
    emails?: Array<{ value: string }>
  }

  export type VerifyCallback = (err: Error | null, user?: Express.User | false, info?: unknown) => void

  export default class OpenIDConnectStrategy {
    constructor(options: StrategyOptions, verify: (issuer: string, profile: Profile, cb: VerifyCallback) => void)
    name: string
    authenticate(req: unknown, options?: unknown): void
  }
}
