// Headless Chromium for the page tests (Debian /usr/bin/chromium through playwright-core); the
// tests that need it are skipped, with a message, where it is missing. The functions the tests
// hand to page.evaluate run in the page, so the browser's types (window, fetch, sessionStorage)
// are declared for them here.
/// <reference lib="dom" />
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'
export const haveChromium = existsSync(CHROMIUM)

export function warnIfNoChromium(what: string): void {
  if (!haveChromium) console.warn(`skipping ${what}: ${CHROMIUM} is missing (apt-get install -y chromium)`)
}

/** `args` adds to the flags every test uses. */
export function launchChromium(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  })
}
