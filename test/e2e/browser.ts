// Headless Chromium for the page tests (Debian /usr/bin/chromium through playwright-core); the
// tests that need it are skipped, with a message, where it is missing. The functions the tests
// hand to page.evaluate run in the page, so the browser's types (window, fetch, sessionStorage)
// are declared for them here.
/// <reference lib="dom" />
import { existsSync } from 'node:fs'
import { chromium, type Browser, type Page } from 'playwright-core'

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

/**
 * With SCREENSHOT_DIR set, saves the whole page as `<name>-desktop.png` (1280 px) and
 * `<name>-mobile.png` (`phoneWidth`), then puts the viewport back at 1280 px; without it, nothing.
 */
export async function saveScreenshots(page: Page, name: string, phoneWidth = 390): Promise<void> {
  const dir = process.env.SCREENSHOT_DIR
  if (!dir) return
  for (const [width, label] of [
    [1280, 'desktop'],
    [phoneWidth, 'mobile'],
  ] as const) {
    await page.setViewportSize({ width, height: 900 })
    await page.screenshot({ path: `${dir}/${name}-${label}.png`, fullPage: true })
  }
  await page.setViewportSize({ width: 1280, height: 900 })
}
