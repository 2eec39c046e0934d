// The process tests run what a person runs: the compiled server and CLI in dist/ (`npm start`, the
// `authz` command), not the sources through a TypeScript loader, which cost each child process a
// second of CPU. The process project's global setup compiles dist/ first when src/ is newer
// (scripts/build.mjs --if-stale), so a test never runs stale code.
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../../', import.meta.url))
/** The server's entry point, as `npm start` and the image run it. */
export const MAIN = join(ROOT, 'dist', 'main.js')
/** The admin CLI's entry point, as bin/authz.js runs it. */
export const CLI = join(ROOT, 'dist', 'cli.js')
