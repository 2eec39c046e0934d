#!/usr/bin/env node
// The admin CLI, compiled to dist/ by `npm install` (prepare) or `npm run build`.
import '../dist/cli.js'
