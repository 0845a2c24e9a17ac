#!/usr/bin/env node
// The cost of a statement page however long a wallet's history grows: a wallet with BENCH_ENTRIES
// (default 100,000) ledger entries — a valid chain (`seq` 1…n, balances after, `postedAt` one
// second apart, every entry type), seeded straight into the database, as many ops would have
// written it — read through `GET /v1/wallet/transactions` of the wallet service alone, started
// from its build (`pnpm build` first) as a child process on the infra `scripts/infra.mjs` would
// use (MONGO_URL and AMQP_URL when set and reachable, else it finds or starts them). For each
// kind of page it prints the service's CPU per page (from /proc/<pid>/stat, so the load generator
// is not counted) and the p50/p99 of BENCH_PAGES pages one after another: the newest page, a page
// deep in the history (cursor at the middle), a page filtered by type, a date range in the
// middle, and the last page; then the CSV export of an hour's entries. Target: ≤ 20 ms per page.
//   node bench/statement.mjs   (BENCH_ENTRIES, default 100000; BENCH_PAGES, default 100;
//                               BENCH_LIMIT, default 50;
//                               BENCH_SERVICE_MAIN, the entry of another build to compare with)
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { infraKit, measureRequests, root, startService, stopService } from './lib/service-bench.mjs';

const { provideInfra, testIdentity, uniqueName, call } = infraKit;
const require = createRequire(join(root, 'services/wallet/package.json'));
const mongoose = require('mongoose');

const ENTRIES = Number(process.env.BENCH_ENTRIES ?? 100_000);
const PAGES = Number(process.env.BENCH_PAGES ?? 100);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 50);
const serviceMain = process.env.BENCH_SERVICE_MAIN ?? join(root, 'services/wallet/dist/main.js');
/** @type {Array<[string, number, number]>} the ledger's kinds of entry: type, available and held deltas (minor units) */
const TYPES = [
  ['topup_credit', 5_00, 0],
  ['transfer_debit', -1_00, 0],
  ['booking_hold', -2_00, 2_00],
  ['booking_settle', 50, -2_00],
  ['transfer_credit', 1_00, 0],
];
const START = Date.parse('2025-01-01T00:00:00Z');

/** Writes `count` chained entries on `walletId` in batches, and the balances they end on onto the wallet. */
async function seed(db, walletId, count) {
  const ledger = db.collection('ledger_entries');
  let available = 0;
  let held = 0;
  for (let from = 1; from <= count; from += 5_000) {
    const batch = [];
    for (let seq = from; seq < Math.min(from + 5_000, count + 1); seq += 1) {
      const [type, availableDeltaMinor, heldDeltaMinor] = TYPES[seq % TYPES.length];
      available += availableDeltaMinor;
      held += heldDeltaMinor;
      const at = new Date(START + seq * 1000);
      batch.push({
        _id: `bench:${walletId}:${seq}`,
        walletId,
        type,
        availableDeltaMinor,
        heldDeltaMinor,
        reference: `bench-${seq}`,
        createdAt: at,
        token: 'bench',
        seq,
        chainKey: `${walletId}:${seq}`,
        availableAfterMinor: available,
        heldAfterMinor: held,
        postedAt: at,
      });
    }
    await ledger.insertMany(batch, { ordered: false });
  }
  await db.collection('wallets').updateOne({ _id: walletId }, { $set: { availableMinor: available, heldMinor: held } });
}

const infra = await provideInfra({ say: (line) => console.error(line) });
const identity = testIdentity();
const database = uniqueName('bench_statement');
const service = await startService(infra, identity, { main: serviceMain, database, env: { MONGO_DB: database } });
const client = await mongoose.mongo.MongoClient.connect(infra.mongoUrl);
try {
  const user = identity.newUser('seller');
  const token = identity.tokenOf(user);
  const opened = await call(service.url, 'GET', '/v1/wallet', { token });
  if (opened.status !== 200) throw new Error(`GET /v1/wallet: ${opened.status}`);
  const db = client.db(database);
  const seedStarted = performance.now();
  await seed(db, opened.body.data.id, ENTRIES);
  console.error(`[bench] ${ENTRIES.toLocaleString('en')} entries seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

  const at = (seq) => new Date(START + seq * 1000).toISOString();
  const middle = Math.floor(ENTRIES / 2);
  const cases = [
    ['newest page', `limit=${LIMIT}`],
    ['deep page (cursor at the middle)', `limit=${LIMIT}&cursor=${middle}`],
    ['type filter (1 type in 5)', `limit=${LIMIT}&type=booking_hold&cursor=${middle}`],
    ['date range in the middle (1 hour)', `limit=${LIMIT}&from=${at(middle)}&to=${at(middle + 3600)}`],
    ['last page', `limit=${LIMIT}&cursor=${LIMIT}`],
  ];
  const rows = [];
  for (const [name, query] of cases) {
    const path = `/v1/wallet/transactions?${query}`;
    const measured = await measureRequests(service, () => call(service.url, 'GET', path, { token }), { count: PAGES, warmUp: 5 });
    const entries = measured.last.body.data.entries.length;
    rows.push(`| ${name} | ${entries} | ${measured.cpu.toFixed(1)} | ${measured.p50.toFixed(1)} | ${measured.p99.toFixed(1)} |`);
  }
  const hour = `/v1/wallet/transactions.csv?from=${at(middle)}&to=${at(middle + 3600)}`;
  const csv = await measureRequests(service, () => call(service.url, 'GET', hour, { token }), { count: 5, warmUp: 1 });
  rows.push(
    `| CSV export of an hour (${csv.last.body.split('\r\n').length - 2} rows) | – | ${csv.cpu.toFixed(1)} | ${csv.p50.toFixed(1)} | ${csv.p99.toFixed(1)} |`,
  );

  console.log(`\nGET /v1/wallet/transactions, one wallet of ${ENTRIES.toLocaleString('en')} entries (${new Date().toISOString()}):\n`);
  console.log('| page | entries | CPU ms / page | p50 ms | p99 ms |');
  console.log('|---|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
} finally {
  await client.close();
  await stopService(service, infra);
}
