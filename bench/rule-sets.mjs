#!/usr/bin/env node
// CPU per request of a seller's rule-set listing, `GET /consultations/availability-rule-sets/rule-sets`
// (`bookings` and `utilization`: places booked ÷ places offered in the next 28 days), when the
// seller's one rule set carries 10, 1,000 and 5,000 consultations (durations of 15..120 minutes:
// 8 distinct), against the consultation service alone, started from its build (`pnpm build`
// first) as a child process on the infra `scripts/infra.mjs` would use (MONGO_URL and AMQP_URL
// when set and reachable, else it finds or starts them), with MAX_CONSULTATIONS_PER_SELLER raised
// to let the seller have them. Prints a markdown table: CPU of the service process per listing
// (from /proc/<pid>/stat, so the load generator's own work is not counted), the listings' p50/p99
// one at a time, and the p50/p99 of an unrelated anonymous `GET /consultations/{id}` while 4
// clients list without pause (what the audit saw take 1.4 s with 5,000).
//   node bench/rule-sets.mjs   (BENCH_LISTINGS, default 50; BENCH_SECONDS, default 5;
//                               BENCH_SIZES, default 10,1000,5000;
//                               BENCH_SERVICE_MAIN, the entry of another build to compare with)
import { join } from 'node:path';
import { WEEKDAYS } from '../scripts/lib/seed.mjs';
import { infraKit, measureDetailUnderLoad, measureRequests, root, startService, stopService } from './lib/service-bench.mjs';

const { provideInfra, testIdentity, call } = infraKit;
const listings = Number(process.env.BENCH_LISTINGS ?? 50);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const sizes = (process.env.BENCH_SIZES ?? '10,1000,5000').split(',').map(Number);
const ZONE = 'Africa/Addis_Ababa';
const RULE_SETS = '/consultations/availability-rule-sets/rule-sets';
/** The service's entry: another build (e.g. of the commit before a change) to compare with. */
const serviceMain = process.env.BENCH_SERVICE_MAIN ?? join(root, 'services/consultation/dist/main.js');

/** A seller with one rule set (every day 09:00–17:00) carrying `count` consultations (8 durations), and one approved. */
async function givenSeller(url, identity, count) {
  const seller = identity.newUser('seller');
  const asSeller = identity.as(url, seller);
  const ruleSet = await asSeller('POST', RULE_SETS, {
    name: `Bench ${count}`,
    timezone: ZONE,
    metaData: { autoAccept: true, bufferTime: 5, maxBookingsPerDay: 1000 },
    availabilityRules: WEEKDAYS.map((weekday) => ({
      type: 'weekly',
      weekday,
      intervals: [{ start_time: '09:00:00', end_time: '17:00:00', enabled: true }],
    })),
  });
  const pricing = await asSeller('POST', '/consultations/pricing', { basePrice: 10, currency: 'ETB', pricingStrategy: 'Fixed' });
  const create = (i) =>
    asSeller('POST', '/consultations', {
      title: `Consultation ${i}`,
      duration: 15 * (1 + (i % 8)),
      sessionType: 'Group',
      maxCapacity: 1 + (i % 5),
      deliveryMode: 'Online',
      timezone: ZONE,
      language: 'English',
      category: 'Business',
      ruleSetId: ruleSet.body.data.id,
      pricingId: pricing.body.data.id,
    });
  let first;
  // 8 at a time: creating 5,000 takes a while, but it is not what is measured.
  for (let i = 0; i < count; i += 8) {
    const made = await Promise.all(Array.from({ length: Math.min(8, count - i) }, (_, k) => create(i + k)));
    for (const res of made) if (res.status !== 200) throw new Error(`consultation: ${res.status} ${JSON.stringify(res.body)}`);
    first ??= made[0].body.data;
  }
  const admin = identity.newUser('admin');
  const approve = identity.as(url, admin);
  const approved = await approve('POST', `/consultations/${first.id}/approve`, { version: first.version });
  // A build from before approvals named a version (BENCH_SERVICE_MAIN) refuses the field.
  if (approved.status === 400) await approve('POST', `/consultations/${first.id}/approve`, {});
  return { token: identity.tokenOf(seller), detailPath: `/consultations/${first.id}` };
}

/** CPU of the service per listing and latency, `listings` listings one after another. */
const measureSequential = (service, token) =>
  measureRequests(service, () => call(service.url, 'GET', RULE_SETS, { token }), { count: listings, warmUp: 5 });

const infra = await provideInfra({ say: (line) => console.error(line) });
const identity = testIdentity();
const service = await startService(infra, identity, {
  main: serviceMain,
  database: 'bench_rule_sets',
  env: { MAX_CONSULTATIONS_PER_SELLER: String(Math.max(...sizes)) },
});
try {
  const rows = [];
  for (const size of sizes) {
    const seller = await givenSeller(service.url, identity, size);
    const sequential = await measureSequential(service, seller.token);
    const underLoad = await measureDetailUnderLoad(
      service,
      () => call(service.url, 'GET', RULE_SETS, { token: seller.token }),
      seller.detailPath,
      { clients: 4, seconds },
    );
    rows.push(
      `| ${size.toLocaleString('en')} | ${Math.min(size, 8)} | ${sequential.cpu.toFixed(1)} | ${sequential.p50.toFixed(1)} | ${sequential.p99.toFixed(1)} | ${underLoad.p50.toFixed(1)} | ${underLoad.p99.toFixed(1)} |`,
    );
  }
  console.log(`\nGET ${RULE_SETS} (one rule set, every day 09:00–17:00, ${ZONE}; ${new Date().toISOString()}):\n`);
  console.log('| consultations | durations | CPU ms / listing | p50 ms | p99 ms | detail p50 ms, 4 listing clients | detail p99 ms |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
} finally {
  await stopService(service, infra);
}
