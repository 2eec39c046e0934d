// The README and docs/ link to each other and name files of the repository. When a page or a
// heading moves, or a source file is renamed, a reader following the link or looking for the
// file finds nothing: every relative link must reach a file (and, for a Markdown page, a heading
// that has the link's anchor), and every repository path a page names in `code` must exist.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize } from 'node:path'
import { describe, expect, it } from 'vitest'

const PAGES = [
  'README.md',
  'ARCHITECTURE.md',
  'CONTRIBUTING.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** Written in a change of their own; a link to them is accepted only while they do not exist yet. */

/** The page's prose: fenced code blocks (whose `#` lines are shell comments, not headings) removed. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '')
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const out = new Set<string>()
  for (const [, heading] of prose(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = heading!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n === 0 ? base : `${base}-${n}`)
  }
  return out
}

/** Inline links [text](target) and reference definitions [label]: target, outside code. */
function links(text: string): string[] {
  const body = prose(text).replace(/`[^`\n]*`/g, '')
  const inline = [...body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!)
  const defined = [...body.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/gm)].map((m) => m[1]!)
  return [...inline, ...defined]
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target)

/** Repository paths named in `code` in the prose: a top-level folder's files, and top-level files. */
const REPO_PATH =
  /^(?:(?:\.ci|bench|bin|docs|examples|migrations|scripts|seed|src|test)\/[\w./-]*|Dockerfile|docker-compose\.yml|LICENSE|package\.json|tsconfig\.json|vitest\.config\.ts|\.dependency-cruiser\.cjs)$/

function namedPaths(text: string): string[] {
  return [...prose(text).matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!).filter((p) => REPO_PATH.test(p))
}

describe('README.md and docs/*.md', () => {
  it('lists the pages the README links to (the test covers something)', () => {
    expect(PAGES).toEqual(
      expect.arrayContaining([
        'README.md',
        'ARCHITECTURE.md',
        'CONTRIBUTING.md',
        'docs/configuration.md',
        'docs/operate.md',
        'docs/extending.md',
        'docs/performance.md',
      ]),
    )
  })

  it.each(PAGES)('%s: every relative link reaches an existing file and heading', (page) => {
    const text = readFileSync(page, 'utf8')
    const broken: string[] = []
    for (const target of links(text)) {
      if (isExternal(target)) continue
      const [rawPath, fragment] = target.split('#', 2) as [string, string | undefined]
      const path = rawPath === '' ? page : normalize(join(dirname(page), decodeURIComponent(rawPath)))
      if (!existsSync(path)) {
        broken.push(`${target} (no file ${path})`)
        continue
      }
      if (fragment !== undefined && path.endsWith('.md') && !anchors(readFileSync(path, 'utf8')).has(fragment)) {
        broken.push(`${target} (no heading #${fragment} in ${path})`)
      }
    }
    expect(broken, `${page} links to what does not exist`).toEqual([])
  })

  it.each(PAGES)('%s: every repository path it names exists', (page) => {
    const missing = namedPaths(readFileSync(page, 'utf8')).filter((p) => !existsSync(p))
    expect(missing, `${page} names paths that do not exist`).toEqual([])
  })
})
