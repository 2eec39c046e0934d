// Extension grants (RFC 6749 §4.5) built into this server: the one place a fork registers a
// grant type. Each entry is a GrantFactory (src/grants/registry.ts) in a file of its own; the
// token endpoint accepts its grant_type from clients that list it in allowedGrantTypes, and
// discovery's grant_types_supported names it. An embedding passes more to buildApp as `grants`.
import type { GrantFactory } from '../../../grants/registry.js'
import { createTokenExchangeGrant } from './token-exchange.js'

export const EXTENSION_GRANTS: readonly GrantFactory[] = [createTokenExchangeGrant]
