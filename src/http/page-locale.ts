// The language of a page (src/pages/messages/): the application's ui_locales (OpenID Connect
// Core §3.1.2.1) where the request carries it, else the browser's Accept-Language, else English.
// ui_locales travels with the authorization request: in its query or form (the consent page and
// its form), and inside the sign-in page's return_to (the sign-in page on the way to consent).
import type { FastifyRequest } from 'fastify'
import { parseLocalPath } from '../interaction/return-to.js'
import { chooseLocale, messagesFor, type Messages } from '../pages/messages/index.js'

function stringParam(source: unknown, name: string): string | undefined {
  if (typeof source !== 'object' || source === null || !Object.hasOwn(source, name)) return undefined
  const value = (source as Record<string, unknown>)[name]
  return typeof value === 'string' ? value : undefined
}

function uiLocalesOf(req: FastifyRequest): string | undefined {
  const direct = stringParam(req.query, 'ui_locales') ?? stringParam(req.body, 'ui_locales')
  if (direct !== undefined) return direct
  const returnTo = stringParam(req.query, 'return_to')
  return (returnTo && parseLocalPath(returnTo)?.searchParams.get('ui_locales')) || undefined
}

export function messagesOf(req: FastifyRequest): Messages {
  const accept = req.headers['accept-language']
  return messagesFor(chooseLocale(uiLocalesOf(req), typeof accept === 'string' ? accept : undefined))
}
