/* global Buffer */
// Compose's init step for RabbitMQ (the `bus-users` service, run in the gateway's image, which
// holds @mkt/contracts): a user per service, named after the service, with the password of
// AMQP_PASSWORD_<SERVICE> and the permissions of `busPermissions` — each may publish only its
// own events. Through the management API (RABBITMQ_API, the admin's RABBITMQ_ADMIN_USER and
// RABBITMQ_ADMIN_PASSWORD); run on every `up`, it creates or updates the users and touches
// nothing else. Exits non-zero (and the services do not start) when a password is missing.
const { BUS_SERVICES, busPermissions } = require('@mkt/contracts');

const api = process.env.RABBITMQ_API ?? 'http://rabbitmq:15672';
const auth = `Basic ${Buffer.from(`${process.env.RABBITMQ_ADMIN_USER}:${process.env.RABBITMQ_ADMIN_PASSWORD}`).toString('base64')}`;

async function put(path, body) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const response = await fetch(`${api}/api${path}`, {
        method: 'PUT',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (response.ok) return;
      throw new Error(`PUT ${path}: ${response.status} ${await response.text()}`);
    } catch (err) {
      if (attempt >= 30) throw err;
      await new Promise((resolve) => setTimeout(resolve, 2_000)); // the API starts after the AMQP port
    }
  }
}

async function main() {
  for (const service of BUS_SERVICES) {
    const password = process.env[`AMQP_PASSWORD_${service.toUpperCase()}`];
    if (!password) throw new Error(`AMQP_PASSWORD_${service.toUpperCase()} is not set: run node scripts/run.mjs env > .env`);
    const { configure, write, read, topic } = busPermissions(service);
    await put(`/users/${encodeURIComponent(service)}`, { password, tags: '' });
    await put(`/permissions/%2F/${encodeURIComponent(service)}`, { configure, write, read });
    await put(`/topic-permissions/%2F/${encodeURIComponent(service)}`, topic);
    console.log(`bus-users: ${service} may publish ${topic.write} on ${topic.exchange}`);
  }
}

main().catch((err) => {
  console.error(`bus-users: ${err.message}`);
  process.exit(1);
});
