#!/bin/sh
# The official image's RABBITMQ_DEFAULT_USER/PASS, for Debian's rabbitmq-server: the user is
# made on the first boot of an empty data folder; any address may log in (not only localhost).
set -eu
cat >/etc/rabbitmq/rabbitmq.conf <<CONF
listeners.tcp.default = 5672
loopback_users = none
default_user = ${RABBITMQ_DEFAULT_USER:-guest}
default_pass = ${RABBITMQ_DEFAULT_PASS:-guest}
CONF
cd /var/lib/rabbitmq
exec /usr/lib/rabbitmq/bin/rabbitmq-server
