# authz: OAuth 2.0 / OpenID Connect authorization server.
# Build: docker build -t authz .      Run: see docker-compose.yml and docs/operate.md.
# The image ships no credentials: it applies no seed unless SEED_FILE names one (the demo seed,
# /app/seed/demo.json, is for trying it out only).

# 1. Compile TypeScript with the full toolchain.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# 2. Production dependencies only (no TypeScript, vitest, benchmark peers).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

# 3. The runtime image: compiled JavaScript, migrations, the seed schema, a non-root user.
FROM node:24-bookworm-slim
WORKDIR /app
# HOST=0.0.0.0: a container's port is published from its own interface. DEMO_SEED=false: the
# demo seed is never applied by default, even to the embedded database in /data. LOG_FORMAT=json:
# a container's log goes to a collector, even when it runs with a terminal (docker run -t).
ENV PORT=5000 HOST=0.0.0.0 DATA_DIR=/data DEMO_SEED=false LOG_FORMAT=json
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json LICENSE ./
COPY bin ./bin
COPY migrations ./migrations
COPY seed ./seed
# /data holds the embedded database and its private signing keys: the node user's alone.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data && ln -s /app/bin/authz.js /usr/local/bin/authz
USER node
EXPOSE 5000
# Ready = the database answers and every migration is applied. No curl in the slim image: Node's fetch.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 5000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM from the runtime triggers the graceful shutdown (node runs as PID 1 and handles it itself).
# --liftoff-only: the embedded database's WebAssembly stays on V8's baseline compiler, hundreds of
# MiB less at peak (src/db/pglite.ts); it changes nothing on PostgreSQL, which runs no WebAssembly.
# --max-semi-space-size=4: a young generation of 8 MiB instead of 32, and
# --heap-growing-percent=30: the old generation grows by 30 % between full collections instead of
# doubling; together they bound the peak under load (docs/performance.md, "Memory").
CMD ["node", "--liftoff-only", "--max-semi-space-size=4", "--heap-growing-percent=30", "dist/main.js"]
