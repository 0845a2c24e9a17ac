#!/usr/bin/env node
// Latency and throughput of typical calls through the gateway, printed as a markdown table.
// Start the system first with the rate limits off:
//   RATE_LIMIT_IP_PER_MIN=0 RATE_LIMIT_USER_PER_MIN=0 npm start
// then: npm run bench   (BENCH_URL, BENCH_SECONDS and BENCH_CONNECTIONS override the defaults;
// BENCH_OVERHEAD=0 skips the gateway-overhead case at the end, bench/gateway-overhead.mjs)
import autocannon from 'autocannon';
import { sdk } from '../scripts/marketplace-client.mjs';
import { gatewayOverhead } from './gateway-overhead.mjs';

const base = process.env.BENCH_URL ?? 'http://localhost:8080';
const duration = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 20);

// The seeding goes through the project's SDK (@mkt/client); the measured calls are autocannon's.
const { MarketplaceClient } = await sdk();

async function register(role) {
  const client = new MarketplaceClient({ baseUrl: base });
  const session = await client.register({
    email: `bench-${role}-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
    password: 'a long password',
    fullName: `Bench ${role}`,
    role,
  });
  return { client, token: session.accessToken, id: session.user.id, ref: session.user.referenceId };
}

const seller = await register('seller');
const buyer = await register('buyer');
const product = await seller.client.ok(
  seller.client.api.POST('/physical-products/seller-products/', {
    body: {
      name: 'Bench coffee',
      description: '<p>Bench</p>',
      sellingPrice: 100,
      stock: 5,
      shippingHandler: 'Seller',
      categoryId: 'MKT-CAT-GROCERY0',
    },
  }),
);

const cases = [
  { name: 'GET /healthz (gateway itself)', path: '/healthz' },
  { name: 'GET /v1/auth/me (token verified, user read)', path: '/v1/auth/me', token: buyer.token },
  { name: 'GET /v1/wallet (proxied, token verified by wallet)', path: '/v1/wallet', token: buyer.token },
  { name: 'GET /physical-products/seller-products/{id} (public)', path: `/physical-products/seller-products/${product.data.id}` },
  { name: 'GET /physical-products/seller-products/?q= (search)', path: '/physical-products/seller-products/?q=coffee' },
  { name: 'GET /consultations (public list)', path: '/consultations' },
];

const rows = [];
for (const c of cases) {
  const result = await autocannon({
    url: `${base}${c.path}`,
    connections,
    duration,
    headers: c.token ? { authorization: `Bearer ${c.token}` } : {},
  });
  rows.push(`| ${c.name} | ${result.requests.average.toFixed(0)} | ${result.latency.p50} | ${result.latency.p99} | ${result.non2xx} |`);
}
console.log(`\nThrough ${base}, ${connections} connections, ${duration} s each (${new Date().toISOString()}):\n`);
console.log('| call | req/s | p50 ms | p99 ms | non-2xx |');
console.log('|---|---:|---:|---:|---:|');
for (const row of rows) console.log(row);

// Gateway overhead: the catalog direct vs through the gateway vs through nginx.
if (process.env.BENCH_OVERHEAD !== '0') await gatewayOverhead();
