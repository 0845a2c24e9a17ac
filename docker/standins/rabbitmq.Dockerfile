# Stand-in for the `rabbitmq:4-management` image where no registry can be reached
# (docker/compose.standins.yml, built by scripts/containers.mjs): Debian 12's rabbitmq-server
# (3.10.8: quorum queues, x-delivery-limit and message TTL on quorum queues all exist) with the
# management plugin, configured from RABBITMQ_DEFAULT_USER/PASS as the official image is.
ARG BASE=docker.io/library/node:24.21.0-bookworm-slim
FROM ${BASE}
# DL3008: the stand-in takes whatever bookworm's mirror ships (a point release moves the exact
# version; the script prints it), as the official image's tag `4-management` moves too.
# hadolint ignore=DL3008
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends rabbitmq-server \
 && rm -rf /var/lib/apt/lists/* \
 && rabbitmq-plugins enable --offline rabbitmq_management \
 && chown rabbitmq:rabbitmq /etc/rabbitmq
COPY rabbitmq-entrypoint.sh /usr/local/bin/rabbitmq-entrypoint
# The server itself, as its user, logging to stdout: Debian's /usr/sbin wrapper (su) would not
# pass SIGTERM on, and every stop would wait for SIGKILL. By name (DL3066): the package made the
# user, with whatever system uid it got.
# hadolint ignore=DL3066
USER rabbitmq
ENV RABBITMQ_LOGS=-
EXPOSE 5672 15672
CMD ["/usr/local/bin/rabbitmq-entrypoint"]
