// A session's device as a browser and a system ("Firefox", "Linux") from the User-Agent its sign-in came with,
// so that a person can tell their sessions apart on the account page. Only a label: nothing is
// decided on it, and the header is whatever the browser (or anyone) sent. Checked in this order
// because browsers name their ancestors too (Edge says Chrome and Safari; Chrome says Safari).
const BROWSERS: ReadonlyArray<[RegExp, string]> = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\b(Headless)?Chrom(e|ium)\/|\bCriOS\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
  [/\bcurl\//, 'curl'],
]

const SYSTEMS: ReadonlyArray<[RegExp, string]> = [
  [/\b(iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bLinux\b/, 'Linux'],
]

export interface Device {
  /** The browser's product name, when known. */
  browser: string | undefined
  /** The operating system's name, when known. */
  system: string | undefined
}

export function describeDevice(userAgent: string | undefined): Device {
  if (!userAgent) return { browser: undefined, system: undefined }
  return {
    browser: BROWSERS.find(([re]) => re.test(userAgent))?.[1],
    system: SYSTEMS.find(([re]) => re.test(userAgent))?.[1],
  }
}
