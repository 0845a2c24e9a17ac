# The operations image `marketplace-tools`: backup, restore, reconcile, dlq, migrate-queues and the
# pinned age release, without a repository checkout. From the repository root:
#   docker build -f docker/tools.Dockerfile --build-context age-release=<folder with age and age-keygen> -t marketplace-tools:dev .
# (`npm run images` builds it with podman, age v1.3.2 made with `go install` from the Go module proxy.)
# Every command: `docker run --rm marketplace-tools:dev <command> --help` (scripts/tools.mjs).
# The build stage is docker/service.Dockerfile's, instruction for instruction, so the two share the
# install and compile layers.
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
# The workspace's production dependencies alone, in place: what the commands load (the services'
# MongoDB driver and amqplib, the S3 client of the root package) and what the services' builds
# need when migrate-queues and reconcile load them. (A RUN of its own: the one above is the
# service image's, and must stay identical to share its layer.)
# hadolint ignore=DL3059
RUN CI=true pnpm install --frozen-lockfile --prod --ignore-scripts

FROM node:${NODE_VERSION} AS runtime
# NODE_PATH: packages/kit loads mongoose, which the services (not kit) list as a production
# dependency; pnpm's hoisted store (node_modules/.pnpm/node_modules) is where a workspace package
# finds it outside a service's own folder.
ENV NODE_ENV=production \
    NODE_PATH=/opt/marketplace/node_modules/.pnpm/node_modules \
    AGE=/usr/local/bin/age \
    BACKUP_ROOT=/backups
WORKDIR /opt/marketplace
# Owned by root, read-only to the user: the image runs with a read-only root file system.
COPY --from=build /repo/package.json /repo/pnpm-workspace.yaml ./
COPY --from=build /repo/node_modules ./node_modules
COPY --from=build /repo/packages/contracts ./packages/contracts
COPY --from=build /repo/packages/kit ./packages/kit
COPY --from=build /repo/services ./services
COPY scripts/tools.mjs scripts/backup.mjs scripts/reconcile.mjs scripts/dlq.mjs scripts/migrate-queues.mjs ./scripts/
COPY scripts/lib/deps.mjs scripts/lib/errors.mjs scripts/lib/go-tools.mjs ./scripts/lib/
# age-release is a build context (--build-context), not a stage: the pinned age release.
# hadolint ignore=DL3022
COPY --from=age-release age age-keygen /usr/local/bin/
# Sources stay out: only builds, manifests and production dependencies.
RUN find packages services -path '*/node_modules' -prune -o \( -name src -o -name test -o -name '*.tsbuildinfo' \) -exec rm -rf {} + \
 && chmod 0755 scripts/tools.mjs /usr/local/bin/age /usr/local/bin/age-keygen \
 && ln -s /opt/marketplace/scripts/tools.mjs /usr/local/bin/marketplace-tools \
 && groupadd --gid 10001 marketplace \
 && useradd --uid 10001 --gid marketplace --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin marketplace \
 && mkdir -m 0770 /backups && chown 10001:10001 /backups
# marketplace (10001:10001), made here whatever the base image holds: a UID/GID above 10000 shares
# no id with a host's users; numeric, since Kubernetes' runAsNonRoot can only verify a numeric user.
USER 10001:10001
ENTRYPOINT ["node", "/opt/marketplace/scripts/tools.mjs"]
CMD ["--help"]
