import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { serviceLayout } from '../src/service-layout';

/** A service's src/ in a temporary folder, from its files' paths and texts. */
function service(files: Record<string, string>): { src: string; remove: () => void } {
  const src = fs.mkdtempSync(path.join(os.tmpdir(), 'layout-'));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(src, file)), { recursive: true });
    fs.writeFileSync(path.join(src, file), text);
  }
  return { src, remove: () => fs.rmSync(src, { recursive: true, force: true }) };
}

const KEPT: Record<string, string> = {
  'app.ts': "mountEndpoints(app, { handlers: operationHandlers(OPERATIONS, 'shop', { ...shopHandlers(shops) }) });\n",
  'composition.ts': '',
  'config.ts': '',
  'main.ts': '',
  'migrate.ts': '',
  'tracing.ts': '',
  'domain/records.ts': 'export interface ShopDoc {\n  _id: string;\n  name: string;\n}\n',
  'domain/errors.ts': "export class SlugTaken extends Conflict {}\nexport const raw = () => new AppError(409, 'conflict', 'taken');\n",
  'domain/shops.ts': "export type ShopState = Pick<ShopDoc, '_id' | 'name'>;\nexport const refuse = () => new Forbidden('not yours');\n",
  'application/shops.use-cases.ts': 'export class Shops {}\n',
  'application/orders.steps.ts': '',
  'application/holds.sweep.ts': '',
  'db/models.ts': '',
  'db/collections.ts': '',
  'db/shop.repository.ts': 'find(): Promise<Array<{ _id: string }>> {}\n',
  'db/holds.metrics.ts': '',
  'db/ledger-chain.backfill.ts': '',
  'http/shops.handlers.ts': "export const shopHandlers = (shops: Shops) => operationHandlers(OPERATIONS, 'shop', {});\n",
  'http/views.ts': '',
  'http/edge.ts': 'export function createEdge() {}\n',
  'events/users.consumer.ts': "defineConsumer({ subscription: SUBSCRIPTIONS['shop.users'], handlers: {} });\n",
  'migrations/index.ts': '',
  'migrations/0001-indexes.ts': '',
  'payments/sandbox.provider.ts': '',
  'payments/wallet.client.ts': '',
};

test('a service that keeps the layout has nothing to name', () => {
  const { src, remove } = service(KEPT);
  try {
    expect(serviceLayout(src)).toEqual([]);
  } finally {
    remove();
  }
});

test('names every misplaced or misnamed file, with the rule it breaks', () => {
  const { src, remove } = service({
    ...KEPT,
    'helpers.ts': '',
    'utils/strings.ts': '',
    'http/admin/routes.ts': '',
    'application/orders.ts': 'export class Orders {}\n',
    'application/order-steps.ts': '',
    'domain/shop.errors.ts': 'export class ShopClosed extends InvalidState {}\n',
    'domain/orders.ts': "export const refuse = () => new AppError(403, 'forbidden', 'no');\n",
    'domain/holds.ts': 'export interface HoldDoc {\n  _id: string;\n}\n',
    'db/keys.ts': '',
    'http/orders.ts': "export function orderHandlers(): Pick<OperationHandlers<typeof OPERATIONS, 'shop'>, 'getOrder'> {}\n",
    'http/audit.handlers.ts': 'const x = 1;\n',
    'events/consumers.ts': "defineConsumer({ subscription: SUBSCRIPTIONS['shop.users'] });\n",
    'events/orders.consumer.ts':
      "defineConsumer({ subscription: SUBSCRIPTIONS['shop.payments'] });\ndefineConsumer({ subscription: SUBSCRIPTIONS['shop.orders'] });\n",
    'events/notes.consumer.ts': 'export const note = 1;\n',
    'events/payments.consumer.ts': "defineConsumer({ subscription: SUBSCRIPTIONS['shop.refunds'] });\n",
    'application/projection.use-cases.ts': "export const c = defineConsumer({ subscription: SUBSCRIPTIONS['shop.bookings'] });\n",
    'migrations/indexes.ts': '',
    'db/schema.json': '{}',
  });
  try {
    const named = serviceLayout(src).map((line) => line.slice(0, line.indexOf(': ')));
    expect(named.sort()).toEqual(
      [
        'application/order-steps.ts',
        'application/orders.ts',
        'application/projection.use-cases.ts',
        'db/keys.ts',
        'db/schema.json',
        'domain/holds.ts',
        'domain/orders.ts',
        'domain/shop.errors.ts',
        'domain/shop.errors.ts',
        'events/consumers.ts',
        'events/consumers.ts',
        'events/notes.consumer.ts',
        'events/orders.consumer.ts',
        'events/payments.consumer.ts',
        'helpers.ts',
        'http/admin/routes.ts',
        'http/orders.ts',
        'migrations/indexes.ts',
        'utils/strings.ts',
      ].sort(),
    );
    const lines = serviceLayout(src);
    expect(lines).toContain('domain/holds.ts: a stored record type (one with an _id) is declared in domain/records.ts');
    expect(lines).toContain('domain/orders.ts: the service’s errors are declared in domain/errors.ts');
    expect(lines).toContain('http/orders.ts: handlers are in http/<resource>.handlers.ts');
    expect(lines).toContain('events/orders.consumer.ts: one consumer per queue, one queue per file (this one reads payments, orders)');
    expect(lines).toContain('events/payments.consumer.ts: a consumer file is named by its queue (events/refunds.consumer.ts)');
  } finally {
    remove();
  }
});

test('tolerates nothing by its absence: an empty src/ misses every required file, a missing one is named', () => {
  const { src, remove } = service({});
  try {
    expect(serviceLayout(src)).toEqual(
      [
        'app.ts',
        'composition.ts',
        'config.ts',
        'main.ts',
        'migrate.ts',
        'tracing.ts',
        'domain/records.ts',
        'domain/errors.ts',
        'db/models.ts',
        'http/views.ts',
        'migrations/index.ts',
      ].map((file) => `${file}: missing: every service has it`),
    );
  } finally {
    remove();
  }
  expect(serviceLayout(path.join(os.tmpdir(), 'no-such-service-src'))).toEqual([
    `${path.join(os.tmpdir(), 'no-such-service-src')}: no such folder`,
  ]);
});
