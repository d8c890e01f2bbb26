# syntax=docker/dockerfile:1
# Kassa: one container beside one PostgreSQL. Set DATABASE_URL, TON_NETWORK (testnet or mainnet),
# KASSA_MASTER_KEY and BASE_URL (the public https address). The sandbox chain and the embedded
# PostgreSQL are development dependencies and are not in this image.

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only (--omit=optional too: TypeScript is an optional peer of graphile-worker's
# cosmiconfig, unused at run time); the Node 24 runtime comes from the base image. test/package checks
# the same install.
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force

FROM node:24-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
WORKDIR /app
COPY --from=deps --chown=node:node /app/node_modules ./node_modules
COPY --chown=node:node package.json .gmrc ./
COPY --chown=node:node bin ./bin
COPY --chown=node:node src ./src
COPY --chown=node:node tasks ./tasks
COPY --chown=node:node migrations ./migrations
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "bin/kassa.js"]
CMD ["start"]
