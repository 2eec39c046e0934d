#!/usr/bin/env node
// Compiles src/ to dist/ (tsc -p tsconfig.build.json). `--if-stale` (npm start's prestart) skips
// the compiler when nothing it reads changed since the last successful build, so a start costs
// no compile. The last build is dist/.build-stamp, whose mtime is when that build began: a source
// saved while it ran is newer, and the next start compiles again.
import { spawnSync } from 'node:child_process'
import { readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const root = process.cwd()
const stamp = join(root, 'dist', '.build-stamp')
const inputs = ['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json']

/** The newest modification time (ms) of a file, or of any file under a directory. */
function newest(path) {
  let st
  try {
    st = statSync(path)
  } catch {
    return 0 // an input that does not exist changes nothing
  }
  if (!st.isDirectory()) return st.mtimeMs
  let max = st.mtimeMs // a deleted file changes its directory
  for (const e of readdirSync(path)) max = Math.max(max, newest(join(path, e)))
  return max
}

function lastBuild() {
  try {
    return statSync(stamp).mtimeMs
  } catch {
    return -Infinity
  }
}

if (process.argv.includes('--if-stale') && Math.max(...inputs.map((p) => newest(join(root, p)))) < lastBuild()) {
  process.stderr.write('dist/ is current: not compiling\n')
  process.exit(0)
}

const began = new Date()
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc')
const res = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
if (res.status !== 0) process.exit(res.status ?? 1)
writeFileSync(stamp, '')
utimesSync(stamp, began, began)
