# One image per service, built from the repository root:
#   docker build -f docker/service.Dockerfile --build-arg SERVICE=wallet -t marketplace/wallet .
# Stage 1 installs and builds the whole workspace; only its last step depends on SERVICE, so the
# six builds share the install and the compile (layer cache). Stage 2 keeps only that service's
# production dependencies (pnpm deploy --prod) and its build, and runs as the non-root user node.
# `npm run images` (scripts/containers.mjs) builds all six with podman and proves them.
ARG NODE_VERSION=24.21.0-bookworm-slim

FROM node:${NODE_VERSION} AS build
ARG PNPM_VERSION=10.34.8
WORKDIR /repo
RUN npm install -g "pnpm@${PNPM_VERSION}"
# The manifests first: the install layer stays cached until a manifest or the lockfile changes.
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json .npmrc ./
COPY packages/contracts/package.json packages/contracts/
COPY packages/kit/package.json packages/kit/
COPY packages/infra/package.json packages/infra/
COPY services/gateway/package.json services/gateway/
COPY services/wallet/package.json services/wallet/
COPY services/catalog/package.json services/catalog/
COPY services/crm/package.json services/crm/
COPY services/consultation/package.json services/consultation/
COPY services/review/package.json services/review/
COPY e2e/package.json e2e/
COPY deploy/package.json deploy/
RUN pnpm install --frozen-lockfile
COPY tsconfig.base.json tsconfig.json ./
COPY packages ./packages
COPY services ./services
RUN pnpm exec tsc -b packages/contracts packages/kit \
      services/gateway services/wallet services/catalog services/crm services/consultation services/review
# Everything above is the same for the six services; from here on, one of them.
ARG SERVICE
RUN test -n "${SERVICE}" || { echo 'build with --build-arg SERVICE=<gateway|wallet|catalog|crm|consultation|review>' >&2; exit 1; } \
 && pnpm --filter "@mkt/${SERVICE}" deploy --prod --legacy /out

FROM node:${NODE_VERSION} AS runtime
ENV NODE_ENV=production
# The user the service runs as: 10001:10001, above every host's and base image's ids.
RUN groupadd --gid 10001 marketplace \
 && useradd --uid 10001 --gid marketplace --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin marketplace
WORKDIR /app
# Owned by root and read-only to the service: it runs with a read-only root file system anyway.
COPY --from=build /out ./
# marketplace (10001:10001), made here whatever the base image holds: a UID/GID above 10000 shares
# no id with a host's users; numeric, since Kubernetes' runAsNonRoot can only verify a numeric user.
USER 10001:10001
EXPOSE 8080
# Exec form (no shell): node reads PORT itself.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
