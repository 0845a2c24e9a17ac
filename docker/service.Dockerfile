# One image per service, built from the repository root:
#   docker build -f docker/service.Dockerfile --build-arg SERVICE=wallet -t marketplace/wallet .
# Stage 1 installs and builds the workspace; stage 2 keeps only that service's production
# dependencies (pnpm deploy) and its build, and runs as a non-root user.
ARG NODE_VERSION=20.19-bookworm-slim

FROM node:${NODE_VERSION} AS build
ARG SERVICE
WORKDIR /repo
RUN npm install -g pnpm@10.34.8
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json .npmrc tsconfig.base.json tsconfig.json ./
COPY packages ./packages
COPY services ./services
COPY e2e/package.json ./e2e/package.json
COPY deploy/package.json ./deploy/package.json
RUN pnpm install --frozen-lockfile
RUN pnpm exec tsc -b packages/contracts packages/kit services/${SERVICE}
RUN pnpm --filter @mkt/${SERVICE} deploy --prod --legacy /out

FROM node:${NODE_VERSION} AS runtime
ARG SERVICE
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /out ./
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
CMD ["node", "dist/main.js"]
