// Where the demo seed lives: seed/ beside src/ (and beside dist/ in the built package).
import { fileURLToPath } from 'node:url'

export const DEMO_SEED_FILE = fileURLToPath(new URL('../../seed/demo.json', import.meta.url))
