# Stand-in for the `rabbitmq:4-management` image where no registry can be reached
# (docker/compose.standins.yml, built by scripts/containers.mjs): Debian 13's rabbitmq-server 4.0
# (Erlang 27) with the management plugin, configured from RABBITMQ_DEFAULT_USER/PASS as the
# official image is. BASE is a trixie minbase root file system with rabbitmq-server installed,
# made by the script with mmdebstrap (Erlang 27 needs trixie's libc: no bookworm image can hold it).
ARG BASE=localhost/marketplace-standin/rabbitmq-trixie:base
FROM ${BASE}
RUN rabbitmq-plugins enable --offline rabbitmq_management \
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
