#!/usr/bin/env node
// CPU per request of the public slots query: `GET /consultations/{id}/slots`
// for 31 days of 5-minute slots in a daylight-saving zone (America/New_York, a range that
// crosses the March change), against the consultation service alone, started from its build
// (`pnpm build` first) as a child process on the infra `scripts/infra.mjs` would use (MONGO_URL
// and AMQP_URL when set and reachable, else it finds or starts them). Prints a markdown table:
// CPU of the service process per request (from /proc/<pid>/stat, so the load generator's own
// work is not counted), the requests' p50/p99 one at a time, and the p50/p99 of an unrelated
// `GET /consultations/{id}` while 8 clients ask for slots at once (what the audit saw go to a
// median of 650 ms).
//   node bench/slots.mjs   (BENCH_SLOTS_REQUESTS, default 200; BENCH_SECONDS, default 5;
//                           BENCH_SERVICE_NODE_ARGS, node options of the service, e.g. --cpu-prof;
//                           BENCH_SERVICE_MAIN, the entry of another build to compare with)
import { join } from 'node:path';
import { responseCaller, seedBookableConsultation } from '../scripts/lib/seed.mjs';
import { infraKit, measureDetailUnderLoad, measureRequests, root, startService, stopService } from './lib/service-bench.mjs';

const { provideInfra, testIdentity, call } = infraKit;
const requests = Number(process.env.BENCH_SLOTS_REQUESTS ?? 200);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const ZONE = 'America/New_York';
/** The service's entry: another build (e.g. of the commit before a change) to compare with. */
const serviceMain = process.env.BENCH_SERVICE_MAIN ?? join(root, 'services/consultation/dist/main.js');
/** Node options of the service process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` for a CPU profile. */
const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** An approved 5-minute consultation on a rule set in ZONE open `from`..`to` every day. */
async function givenConsultation(url, identity, [from, to]) {
  const seller = identity.newUser('seller');
  const admin = identity.newUser('admin');
  const { consultation } = await seedBookableConsultation(
    { seller: responseCaller(identity.as(url, seller)), admin: responseCaller(identity.as(url, admin)) },
    {
      ruleSet: {
        name: 'Bench',
        timezone: ZONE,
        metaData: { autoAccept: true, bufferTime: 0, maxBookingsPerDay: 1000 },
        intervals: [[from, to]],
        enabled: true,
      },
      pricing: { basePrice: 10, pricingStrategy: 'Fixed', isOnSale: false, isActive: true },
      consultation: { title: 'Quick questions', description: 'Five minutes', duration: 5, maxCapacity: 1 },
    },
  );
  return consultation.id;
}

/** 31 days around the next March change in New York (always in the future). */
function marchRange() {
  const year = new Date().getUTCMonth() >= 2 ? new Date().getUTCFullYear() + 1 : new Date().getUTCFullYear();
  return { from: `${year}-03-01`, to: `${year}-03-31` };
}

/** CPU of the service per request and latency, `requests` requests one after another. */
async function measureSequential(service, path) {
  const { last, ...measured } = await measureRequests(service, () => call(service.url, 'GET', path), { count: requests, warmUp: 20 });
  return { ...measured, slots: last.body.data.slots?.length ?? '–' };
}

const infra = await provideInfra({ say: (line) => console.error(line) });
const identity = testIdentity();
const service = await startService(infra, identity, { main: serviceMain, database: 'bench_slots', nodeArgs });
try {
  const { from, to } = marchRange();
  /** @type {Array<{ name: string, hours: [string, string] }>} */
  const cases = [
    { name: '1 h a day: 12 slots × 31 days (372, crosses the March change)', hours: ['09:00:00', '10:00:00'] },
    { name: 'all day: the first 500 (truncated)', hours: ['00:00:00', '23:59:00'] },
  ];
  const rows = [];
  let detailPath;
  for (const c of cases) {
    const id = await givenConsultation(service.url, identity, c.hours);
    const slotsPath = `/consultations/${id}/slots?from=${from}&to=${to}`;
    const sequential = await measureSequential(service, slotsPath);
    detailPath = `/consultations/${id}`;
    const underLoad = await measureDetailUnderLoad(service, () => call(service.url, 'GET', slotsPath), detailPath, { clients: 8, seconds });
    rows.push(
      `| ${c.name} | ${sequential.slots} | ${sequential.cpu.toFixed(1)} | ${sequential.p50.toFixed(1)} | ${sequential.p99.toFixed(1)} | ${underLoad.p50.toFixed(1)} | ${underLoad.p99.toFixed(1)} |`,
    );
  }
  // The floor: a plain public read of the same service (token-less, one document and its price).
  const detail = await measureSequential(service, detailPath);
  rows.push(
    `| for comparison: GET /consultations/{id} | – | ${detail.cpu.toFixed(1)} | ${detail.p50.toFixed(1)} | ${detail.p99.toFixed(1)} | – | – |`,
  );
  console.log(`\nGET /consultations/{id}/slots?from=${from}&to=${to}, ${ZONE}, 5-minute slots (${new Date().toISOString()}):\n`);
  console.log('| case | slots | CPU ms / request | p50 ms | p99 ms | detail p50 ms, 8 slot clients | detail p99 ms |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  for (const row of rows) console.log(row);
} finally {
  await stopService(service, infra);
}
