// The admin API's scopes (src/admin/): built in, so they need no apiScopes entry, and never
// granted by default: a client gets one only by listing it in allowedScopes and asking for it.
// A token carrying one is an ordinary access token of this server (short-lived, revocable,
// audited), for the server itself as its audience.

/** Everything the admin API offers: reads, writes and actions. */
export const ADMIN_SCOPE = 'authz:admin'
/** Reads only (GET). */
export const ADMIN_READ_SCOPE = 'authz:admin:read'

export const ADMIN_SCOPES: readonly string[] = [ADMIN_SCOPE, ADMIN_READ_SCOPE]

export const isAdminScope = (scope: string): boolean => ADMIN_SCOPES.includes(scope)
