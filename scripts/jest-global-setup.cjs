// Provides MongoDB and RabbitMQ when the environment has none (jest run without `npm test`).
module.exports = async function globalSetup() {
  if (process.env.MONGO_URL && process.env.AMQP_URL) return;
  const { provideInfra } = require('../packages/infra/dist/index.js');
  const infra = await provideInfra({ say: (line) => console.log(line) });
  process.env.MONGO_URL = infra.mongoUrl;
  process.env.AMQP_URL = infra.amqpUrl;
  globalThis.__MKT_INFRA__ = infra;
};
