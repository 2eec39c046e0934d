// Node.js release lines and their end of life (https://nodejs.org/en/about/previous-releases):
// after it a line gets no security fixes, so the server says so once at start (src/main.ts).
// It still starts: refusing would stop a running deployment at its next restart over a date.

/** The last day of each release line still supported by the Node.js project, by major version. */
const END_OF_LIFE: Readonly<Record<number, string>> = {
  16: '2023-09-11',
  17: '2022-06-01',
  18: '2025-04-30',
  19: '2023-06-01',
  20: '2026-04-30',
  21: '2024-06-01',
  22: '2027-04-30',
  23: '2025-06-01',
  24: '2028-04-30',
  25: '2026-06-01',
  26: '2029-04-30',
}

/** What to run instead, said in every warning. */
export const RECOMMENDED_NODE = 'Node.js 24 (LTS)'

/** The warning for a Node.js version past its end of life on `today`; undefined while it is supported. */
export function nodeEndOfLifeWarning(version: string, today: Date): string | undefined {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1])
  if (!Number.isInteger(major)) return undefined
  const end = END_OF_LIFE[major]
  // A line older than the table ended long ago; a newer one is not known to have ended.
  if (end === undefined) {
    return major < 16
      ? `Node.js ${version} is long past its end of life and gets no security fixes: run authz on ${RECOMMENDED_NODE}`
      : undefined
  }
  if (today.toISOString().slice(0, 10) <= end) return undefined
  return `Node.js ${version} reached its end of life on ${end} and gets no security fixes: run authz on ${RECOMMENDED_NODE}`
}
