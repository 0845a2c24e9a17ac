import type { Express } from 'express';
import pino from 'pino';
import { ENDPOINTS, PAYOUT_ADMIN_MOVES, buildOpenApi, type Service } from '@mkt/contracts';
import { Bus, OutboxRelay } from '@mkt/kit';
import { makeKeyPair } from '@mkt/infra';
import { createApp as catalogApp } from '../../services/catalog/src/app';
import { loadConfig as catalogConfig } from '../../services/catalog/src/config';
import { createApp as consultationApp } from '../../services/consultation/src/app';
import { loadConfig as consultationConfig } from '../../services/consultation/src/config';
import { createApp as crmApp } from '../../services/crm/src/app';
import { loadConfig as crmConfig } from '../../services/crm/src/config';
import { createApp as gatewayApp } from '../../services/gateway/src/app';
import { loadConfig as gatewayConfig } from '../../services/gateway/src/config';
import { Identity } from '../../services/gateway/src/domain/identity';
import { createApp as reviewApp } from '../../services/review/src/app';
import { loadConfig as reviewConfig } from '../../services/review/src/config';
import { createApp as walletApp } from '../../services/wallet/src/app';
import { loadConfig as walletConfig } from '../../services/wallet/src/config';
import { assembleWallet } from '../../services/wallet/src/parts';

// Building the apps touches no server: their routers are only read.
const log = pino({ level: 'silent' });
const keys = makeKeyPair();
const env = { MONGO_URL: 'mongodb://unused', AMQP_URL: 'amqp://unused', JWT_PUBLIC_KEY: keys.publicKey, JWT_PRIVATE_KEY: keys.privateKey };
const outbox = new OutboxRelay({ bus: new Bus({ url: 'amqp://unused', log }), log, sources: [] });
const runtime = { log, readiness: [], outbox };
const INFRASTRUCTURE = ['/healthz', '/readyz', '/metrics', '/openapi.json', '/docs', '/docs/init.js'];
// Express parameters that stand for a fixed set of documented paths.
const EXPANSIONS: Record<string, readonly string[]> = { ':move': PAYOUT_ADMIN_MOVES, ':provider': ['chapa'] };

function apps(): Record<Service, Express> {
  const gateway = gatewayConfig(env);
  const signing = { privateKey: gateway.JWT_PRIVATE_KEY, publicKey: gateway.JWT_PUBLIC_KEY, keyId: 'k', accessTtlSeconds: 900 };
  const wallet = walletConfig(env);
  return {
    gateway: gatewayApp({
      config: gateway,
      runtime,
      keys: signing,
      identity: new Identity({ keys: signing, refreshTtlDays: 1, bcryptRounds: 4, referencePrefix: 'MKT' }, outbox, log),
    }),
    wallet: walletApp({ config: wallet, runtime, parts: assembleWallet(wallet, outbox, log) }),
    catalog: catalogApp({ config: catalogConfig(env), runtime }),
    crm: crmApp({ config: crmConfig(env), runtime }),
    consultation: consultationApp({ config: consultationConfig(env), runtime }),
    review: reviewApp({ config: reviewConfig(env), runtime }),
  };
}

interface Layer {
  name: string;
  rawPath?: string | string[];
  route?: { path: string; methods: Record<string, boolean> };
  handle: { stack?: Layer[] };
}

/** Every `method path` an express app serves, parameters written `{name}`. */
function routesOf(stack: Layer[], prefix = ''): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      return Object.keys(layer.route.methods).flatMap((method) =>
        expand(`${prefix}${layer.route!.path}`).map((path) => `${method} ${normalize(path)}`),
      );
    }
    if (layer.name !== 'router' || !layer.handle.stack) return [];
    const mounts = Array.isArray(layer.rawPath) ? layer.rawPath : [layer.rawPath ?? ''];
    return mounts.flatMap((mount) => routesOf(layer.handle.stack!, `${prefix}${mount === '/' ? '' : mount}`));
  });
}

function expand(path: string): string[] {
  const param = Object.keys(EXPANSIONS).find((name) => path.includes(name));
  return param ? EXPANSIONS[param]!.flatMap((value) => expand(path.replace(param, value))) : [path];
}

const normalize = (path: string) => path.replace(/:(\w+)/g, '{$1}').replace(/\/+$/, '') || '/';

describe('the OpenAPI document', () => {
  const built = apps();
  const served = Object.entries(built).flatMap(([service, app]) =>
    routesOf((app as unknown as { router: { stack: Layer[] } }).router.stack)
      .filter((route) => !INFRASTRUCTURE.includes(route.split(' ')[1]!))
      .map((route) => `${service} ${route}`),
  );
  const documented = ENDPOINTS.map((endpoint) => `${endpoint.service} ${endpoint.method} ${normalize(endpoint.path)}`);

  test('documents every endpoint a service serves, and nothing it does not', () => {
    expect(served.length).toBeGreaterThan(60);
    expect([...new Set(served)].sort()).toEqual([...new Set(documented)].sort());
  });

  test('is OpenAPI 3.1 with a bearer scheme, the error envelope, and request schemas from the contracts', () => {
    const document = buildOpenApi();
    expect(document.openapi).toBe('3.1.0');
    expect(document.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.schemas.ErrorBody.example.success).toBe(false);
    const topUp = document.paths['/wallets/users/{userReferenceId}/topup']!.post as {
      requestBody: { content: Record<string, { schema: { properties: Record<string, unknown> } }> };
    };
    expect(Object.keys(topUp.requestBody.content['application/json']!.schema.properties)).toEqual([
      'amount',
      'paymentMethod',
      'redirectUrl',
      'notes',
    ]);
    expect(Object.keys(document.paths).length).toBeGreaterThan(60);
  });
});
