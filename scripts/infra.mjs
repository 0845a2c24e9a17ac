#!/usr/bin/env node
// Finds or starts MongoDB and RabbitMQ (ADR 0010), prints what it used and the URLs, and keeps
// whatever it started running until Ctrl-C. Needs `pnpm install` and `pnpm build` first
// (`npm start` and `npm test` do both). Only the KEY=value lines go to stdout (`> infra.env`).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { provideInfra } = require('../packages/infra/dist/index.js');

const infra = await provideInfra({ say: (line) => console.error(line) });
console.log(`MONGO_URL=${infra.mongoUrl}`);
console.log(`AMQP_URL=${infra.amqpUrl}`);
const stop = async () => {
  await infra.stop();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
setInterval(() => undefined, 1 << 30);
