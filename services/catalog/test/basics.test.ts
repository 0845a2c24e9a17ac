import pino from 'pino';
import { createDatabase } from '@mkt/kit/db';
import { staticAccessKeys } from '@mkt/kit/http';
import { describeServiceBasics, testServers } from '@mkt/infra';
import { createApp } from '../src/app';
import { catalogParts } from '../src/composition';
import { loadConfig } from '../src/config';

describeServiceBasics('catalog', ['/physical-products', '/v1/products', '/v1/shops'], ({ publicKey, readiness }) => {
  const config = loadConfig({ MONGO_URL: testServers().mongoUrl, AMQP_URL: testServers().amqpUrl, JWT_PUBLIC_KEY: publicKey });
  return createApp({
    config,
    runtime: { log: pino({ level: 'silent' }), readiness, accessKeys: staticAccessKeys(publicKey) },
    parts: catalogParts(config, createDatabase()),
  });
});
