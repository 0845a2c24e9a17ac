#!/usr/bin/env node
// The write paths through the gateway, with the rules checked after each run:
//   1. bookings: buyers race two by two for one-place slots (every slot is asked for twice);
//      afterwards no slot holds more than one booking, and every 200 answered matches a
//      Confirmed booking the seller sees;
//   2. booking → CRM lag: a probe buyer books while the load runs and times how long until
//      the seller's CRM counts it; afterwards every buyer's CRM totals equal its bookings;
//   3. transfers: payers send to payees at once — 4 → 4 (several connections per payer wallet),
//      32 → 1 (a hot payee) and 32 distinct pairs; afterwards no money was created or lost and
//      the payees got exactly what was answered.
// Start the system first with the rate limits off:
//   RATE_LIMIT_IP_PER_MIN=0 RATE_LIMIT_USER_PER_MIN=0 RATE_LIMIT_REGISTER_IP_PER_HOUR=0 RATE_LIMIT_SLOTS_PER_MIN=0 npm start
// then: npm run bench:writes   (BENCH_URL, BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_PRICE)
// It exits non-zero when a rule does not hold. Node's fetch keeps its connections alive.
// It ends with the memory of every process `npm start` recorded (.dev/run.json), each with its
// children, after the load: RSS (a page shared by several processes counted in each), PSS (shared
// pages divided among the processes that map them) and private pages, with the stack's totals
// (bench/README.md, "Memory of the stack after the load" and "Step 7").
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onePlaceAllDay, seedBookableConsultation, sdkCaller } from '../scripts/lib/seed.mjs';
import { bookingBody, sdk } from '../scripts/marketplace-client.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** Where `npm start` keeps its pid file (and the wire counters' address): .dev/ of this checkout. */
const devDir = process.env.BENCH_DEV_DIR ?? join(root, '.dev');

const base = process.env.BENCH_URL ?? 'http://localhost:8080';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** The consultation's price in ETB (0: free bookings, no wallet step). */
const price = Number(process.env.BENCH_PRICE ?? 10);
const admin = {
  email: process.env.ADMIN_EMAIL ?? 'admin@marketplace.local',
  password: process.env.ADMIN_PASSWORD ?? 'admin-change-me',
};

const failures = [];
const check = (ok, rule) => {
  if (!ok) failures.push(rule);
  return ok;
};

/**
 * The measured calls (the load's bookings and transfers): fetch as it is, so that a run measures
 * what it did before the SDK (no Idempotency-Key added to a transfer: that is more work for the
 * wallet). Everything else — sign-up, seeding, the rules' reads — goes through the SDK.
 * @param {string} method
 * @param {string} path
 * @param {{ body?: unknown, token?: string, headers?: Record<string, string> }} [options]
 */
async function call(method, path, { body, token, headers } = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const { MarketplaceClient } = await sdk();

const runId = Date.now().toString(36);
/** A user signed up through the SDK: `api` its calls, `data(call)` a success's `data` (else ApiError). */
async function register(role, name) {
  const client = new MarketplaceClient({ baseUrl: base });
  const session = await client.register({
    email: `bench-${runId}-${name}@example.com`,
    password: 'a long bench password',
    fullName: `Bench ${name}`,
    role,
  });
  const data = async (call) => (await client.ok(call)).data;
  return {
    client,
    api: client.api,
    data,
    token: session.accessToken,
    id: session.user.id,
    ref: session.user.referenceId,
    name: `Bench ${name}`,
  };
}

async function until(what, probe, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const balanceOf = async (user) => (await user.data(user.api.GET('/v1/wallet'))).etbAvailableBalance;

/** Tops a wallet up through the sandbox hosted checkout (create, then press Pay). */
async function fund(user, amount) {
  await until('wallet opened', async () => (await user.api.GET('/v1/wallet')).response.status === 200);
  const topUp = await user.data(
    user.api.POST('/wallets/users/{userReferenceId}/topup', {
      params: { path: { userReferenceId: user.ref } },
      body: { amount, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/bench' },
    }),
  );
  await user.client.payInSandbox(topUp.paymentUrl);
}

// ---- CPU per operation: /proc/<pid>/stat of every process `npm start` recorded ----

const TICKS = 100; // USER_HZ: /proc/<pid>/stat counts in 1/100 s on Linux
/** pid → [ppid, utime + stime] of every process now, from /proc. */
function processTable() {
  const table = new Map();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      // after "pid (comm) ": state ppid … utime(14th of the line = index 11 here) stime(12)
      table.set(Number(entry), [Number(fields[1]), Number(fields[11]) + Number(fields[12])]);
    } catch {
      // gone meanwhile
    }
  }
  return table;
}

/** The processes of the run (.dev/run.json): name → pid; the runner holds the wire counters' relays only with MONGO_WIRE_COUNTER=1. */
function runProcesses() {
  try {
    const record = JSON.parse(readFileSync(join(devDir, 'run.json'), 'utf8'));
    const named = new Map(record.processes.map(({ name, pid }) => [name.replace(/^infra:/, ''), pid]));
    named.set('runner', record.runner.pid);
    return named;
  } catch {
    return null;
  }
}

/** Each named process with its descendants (rabbitmq-server's beam.smp, …): name → pids. */
function processTrees(named, table = processTable()) {
  const children = new Map();
  for (const [pid, [ppid]] of table) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const roots = new Set(named.values());
  const trees = {};
  for (const [name, pid] of named) {
    const pids = [];
    for (const queue = [pid]; queue.length > 0;) {
      const each = queue.shift();
      pids.push(each);
      // a recorded process's own children are its own (the runner's children are the services: not its)
      for (const child of children.get(each) ?? []) if (!roots.has(child)) queue.push(child);
    }
    trees[name] = pids;
  }
  return trees;
}

/** CPU ticks per named process, each with its descendants. */
function cpuTicks(named) {
  const table = processTable();
  const ticks = {};
  for (const [name, pids] of Object.entries(processTrees(named, table)))
    ticks[name] = pids.reduce((sum, pid) => sum + (table.get(pid)?.[1] ?? 0), 0);
  const own = process.cpuUsage();
  ticks['load generator (this bench)'] = ((own.user + own.system) / 1e6) * TICKS;
  return ticks;
}

/**
 * Memory (MB) per named process, each with its descendants: `rss` (VmRSS of /proc/<pid>/status:
 * every page the process maps counted whole, shared or not, so a sum over processes counts the
 * node binary's and the shared libraries' pages once per process), `pss` (Pss of
 * /proc/<pid>/smaps_rollup: each page divided among the processes that map it, so the sum over
 * the stack is what it really holds) and `private` (Private_Clean + Private_Dirty: its own pages
 * only). `pss` and `private` are null when smaps_rollup cannot be read (another user's process,
 * a kernel before 4.14); a process gone meanwhile, or a zombie, holds nothing.
 */
function memoryMb(named) {
  const kb = (text, field) => {
    const line = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
    return line ? Number(line[1]) : 0;
  };
  const read = (pid) => {
    let rss = 0;
    try {
      rss = kb(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');
    } catch {
      return { rss: 0, pss: 0, private: 0 }; // gone meanwhile
    }
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      return { rss, pss: kb(rollup, 'Pss'), private: kb(rollup, 'Private_Clean') + kb(rollup, 'Private_Dirty') };
    } catch (err) {
      // Gone meanwhile (ENOENT), or a zombie whose pages are gone (ESRCH): nothing held.
      const code = /** @type {NodeJS.ErrnoException} */ (err).code;
      if (code === 'ENOENT' || code === 'ESRCH') return { rss: 0, pss: 0, private: 0 };
      return { rss, pss: null, private: null }; // not readable (another user's process)
    }
  };
  return Object.fromEntries(
    Object.entries(processTrees(named)).map(([name, pids]) => {
      const figures = pids.map(read);
      const mb = (key) => {
        const kB = addUp(figures, key);
        return kB === null ? null : kB / 1024;
      };
      return [name, { rss: mb('rss'), pss: mb('pss'), private: mb('private') }];
    }),
  );
}

/** The sum of `key` over `rows`, or null when any row has none (a figure that could not be read). */
function addUp(rows, key) {
  return rows.some((row) => row[key] === null) ? null : rows.reduce((sum, row) => sum + row[key], 0);
}

/** Database commands so far per service, when `npm start` ran with MONGO_WIRE_COUNTER=1. */
async function wireCounts() {
  try {
    const { url } = JSON.parse(readFileSync(join(devDir, 'wire-counter.json'), 'utf8'));
    const counts = /** @type {Record<string, Record<string, number>>} */ (await (await fetch(url)).json());
    return Object.fromEntries(
      Object.entries(counts).map(([name, byCommand]) => [name, Object.values(byCommand).reduce((a, b) => a + b, 0)]),
    );
  } catch {
    return null;
  }
}

const named = runProcesses();
if (!named)
  console.error(`# no ${join(devDir, 'run.json')}: CPU per operation not measured (start the system with npm start from this checkout)`);

/** A snapshot of CPU and commands; `settle` first waits until the asynchronous work (the CRM's events) is done. */
async function snapshot({ settle = false } = {}) {
  if (settle && named) {
    // Quiet when the run's processes together use less than 3 ticks in 250 ms (at most 5 s).
    for (let i = 0, last = cpuTicks(named); i < 20; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const now = cpuTicks(named);
      const busy = Object.keys(now)
        .filter((name) => !name.startsWith('load generator'))
        .reduce((sum, name) => sum + now[name] - last[name], 0);
      last = now;
      if (busy < 3) break;
    }
  }
  return { cpu: named ? cpuTicks(named) : null, commands: await wireCounts() };
}

/** CPU ms and database commands per operation between two snapshots. */
function perOperation(before, after, operations) {
  const cpu =
    before.cpu && after.cpu
      ? Object.fromEntries(
          Object.keys(after.cpu).map((name) => [name, ((after.cpu[name] - before.cpu[name]) * (1000 / TICKS)) / operations]),
        )
      : null;
  const commands =
    before.commands && after.commands
      ? Object.fromEntries(
          Object.keys(after.commands).map((name) => [name, (after.commands[name] - (before.commands[name] ?? 0)) / operations]),
        )
      : null;
  return { operations, cpu, commands };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** `connections` workers, each taking jobs from `next()` until it says null or time is up. */
async function load(next, perform) {
  // To stderr, for lining a profile or CPU samples up with the loaded window.
  console.error(`# load window starts ${new Date().toISOString()}`);
  const latencies = [];
  const statuses = new Map();
  const deadline = Date.now() + seconds * 1_000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async (_, worker) => {
      for (let job = next(worker); job !== null && Date.now() < deadline; job = next(worker)) {
        const t0 = performance.now();
        const status = await perform(job, worker).catch(() => 'error');
        latencies.push(performance.now() - t0);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1_000;
  console.error(`# load window ends ${new Date().toISOString()}`);
  latencies.sort((a, b) => a - b);
  return {
    count: latencies.length,
    rate: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    statuses,
  };
}

const fmt = (ms) => (Number.isNaN(ms) ? '–' : ms.toFixed(0));
const statusText = (statuses) => [...statuses].map(([status, n]) => `${n}×${status}`).join(', ');

async function benchBookings(admin) {
  const seller = await register('seller', 'seller');
  const buyers = await Promise.all(Array.from({ length: connections }, (_, i) => register('buyer', `buyer${i}`)));
  const probe = await register('buyer', 'probe');
  if (price > 0) await Promise.all([...buyers, probe].map((buyer) => fund(buyer, 100_000)));

  const { ruleSet, consultation } = await seedBookableConsultation(
    { seller: sdkCaller(seller.client), admin: sdkCaller(admin) },
    onePlaceAllDay({ name: 'Bench: all day', title: 'Bench consultation', price }),
  );

  // Free slots from tomorrow on, within the 31-day window a slot query may span.
  const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const slots = [];
  for (let from = 1; from <= 29; from += 7) {
    const listed = await seller.data(
      seller.api.GET('/consultations/{id}/slots', {
        params: { path: { id: consultation.id }, query: { from: day(from), to: day(Math.min(from + 6, 29)) } },
      }),
    );
    for (const slot of listed.slots) slots.push(slot);
  }
  // The probe books from the end of the list; the load takes slots from the front, each twice.
  const probeSlots = slots.splice(slots.length - 200);
  const booking = (buyer, slot) =>
    bookingBody(
      { seller, consultation, ruleSet },
      slot,
      { fullName: buyer.name, email: `${buyer.ref.toLowerCase()}@example.com`, phone: '+251911000000' },
      price,
    );

  const confirmedBy = new Map();
  const book = async (slot, worker) => {
    const buyer = buyers[worker];
    const res = await call('POST', '/consultations/bookings', { token: buyer.token, body: booking(buyer, slot) });
    if (res.status === 200 && res.body.data.status === 'Confirmed') confirmedBy.set(buyer.id, (confirmedBy.get(buyer.id) ?? 0) + 1);
    return res.status;
  };
  // 1. Confirmed, paid: every slot asked for once (CPU and commands per booking measured alone).
  const taken = [];
  let handedOut = 0;
  const before1 = await snapshot();
  const confirmedRun = await load(
    () => (handedOut < slots.length ? slots[handedOut++] : null),
    async (slot, worker) => {
      const status = await book(slot, worker);
      if (status === 200) taken.push(slot);
      return status;
    },
  );
  const confirmedCost = perOperation(before1, await snapshot({ settle: true }), confirmedRun.count);
  // 2. Refused: the slots just taken, asked for again (422 slot_unavailable).
  let refusedAsked = 0;
  const before2 = await snapshot();
  const refusedRun = await load(() => (taken.length > 0 ? taken[refusedAsked++ % taken.length] : null), book);
  const refusedCost = perOperation(before2, await snapshot({ settle: true }), refusedRun.count);
  // 3. The race: the slots left, each asked for by two buyers at once, while a probe times the CRM.
  const free = slots.slice(handedOut);
  let raced = 0;
  let stop = false;
  const lags = [];
  const crmTotal = async (buyer) => {
    const listed = await seller.data(
      seller.api.GET('/customers/seller/{sellerId}', { params: { path: { sellerId: seller.id }, query: { limit: 100 } } }),
    );
    return listed.customers.find((c) => c.buyerName === buyer.name)?.totalBookings ?? 0;
  };
  const probeRun = (async () => {
    let done = 0;
    while (!stop && probeSlots.length > 0) {
      const res = await call('POST', '/consultations/bookings', { token: probe.token, body: booking(probe, probeSlots.shift()) });
      if (res.status !== 200 || res.body.data.status !== 'Confirmed') continue;
      const t0 = performance.now();
      done += 1;
      await until('CRM counts the probe booking', async () => (await crmTotal(probe)) >= done, 10_000);
      lags.push(performance.now() - t0);
    }
  })();
  const before3 = await snapshot();
  const result = await load(() => (raced < free.length * 2 ? free[Math.floor(raced++ / 2)] : null), book);
  stop = true;
  await probeRun;
  const raceCost = perOperation(before3, await snapshot({ settle: true }), result.count + lags.length);

  // Rules: each slot at most once; the seller's Confirmed bookings are exactly those answered 200.
  const seen = new Map();
  for await (const b of seller.client.items('/consultations/bookings', { query: { status: 'Confirmed' } })) {
    seen.set(`${b.date} ${b.startTime}`, (seen.get(`${b.date} ${b.startTime}`) ?? 0) + 1);
  }
  const overbooked = [...seen.values()].filter((n) => n > 1).length;
  const confirmed = [...confirmedBy.values()].reduce((a, b) => a + b, 0);
  const listedConfirmed = [...seen.values()].reduce((a, b) => a + b, 0) - lags.length;
  check(overbooked === 0, `bookings: ${overbooked} slots hold more than one booking`);
  check(listedConfirmed === confirmed, `bookings: ${confirmed} answered Confirmed, ${listedConfirmed} listed`);
  // CRM totals exact once the events are in.
  let crmExact = false;
  try {
    await until('CRM totals equal the bookings', async () => {
      const listed = await seller.data(
        seller.api.GET('/customers/seller/{sellerId}', { params: { path: { sellerId: seller.id }, query: { limit: 100 } } }),
      );
      const byName = new Map(listed.customers.map((c) => [c.buyerName, c]));
      return buyers.every((buyer) => (byName.get(buyer.name)?.totalBookings ?? 0) === (confirmedBy.get(buyer.id) ?? 0));
    });
    crmExact = true;
  } catch {
    check(false, 'CRM totals differ from the confirmed bookings');
  }
  lags.sort((a, b) => a - b);
  return {
    confirmedRun,
    confirmedCost,
    refusedRun,
    refusedCost,
    result,
    raceCost,
    overbooked,
    confirmed,
    crmExact,
    lag: { n: lags.length, p50: percentile(lags, 50), p99: percentile(lags, 99) },
  };
}

/**
 * `payerCount` payers send to `payeeCount` payees at once, worker `w` paying from payer
 * `w % payerCount` to payee `pick(job, w) % payeeCount`: 4 → 4 (8 connections per payer wallet,
 * each payee paid by all), 32 → 1 (a hot payee: one seller paid by 32 wallets), 32 → 32 (distinct
 * pairs: worker `w` pays payee `w` only).
 * @param {string} name
 * @param {number} payerCount
 * @param {number} payeeCount
 * @param {(job: number, worker: number) => number} pick
 */
async function benchTransfers(name, payerCount, payeeCount, pick) {
  const payers = await Promise.all(Array.from({ length: payerCount }, (_, i) => register('buyer', `${name}-payer${i}`)));
  const payees = await Promise.all(Array.from({ length: payeeCount }, (_, i) => register('seller', `${name}-payee${i}`)));
  await Promise.all(payers.map((payer) => fund(payer, 100_000)));
  await Promise.all(payees.map((payee) => until('wallet opened', async () => (await payee.api.GET('/v1/wallet')).response.status === 200)));
  const everyone = [...payers, ...payees];
  const balancesBefore = await Promise.all(everyone.map(balanceOf));
  const amountMinor = 1_00;
  let sentMinor = 0;
  let n = 0;
  const before = await snapshot();
  const result = await load(
    () => n++,
    async (i, worker) => {
      const payer = payers[worker % payers.length];
      const payee = payees[pick(i, worker) % payees.length];
      const res = await call('POST', '/v1/wallet/transfers', {
        token: payer.token,
        body: { toUserId: payee.id, amount: amountMinor, currency: 'ETB' },
      });
      if (res.status === 200 && res.body.data.status === 'Completed') sentMinor += amountMinor;
      return res.status;
    },
  );
  const cost = perOperation(before, await snapshot({ settle: true }), result.count);
  const after = await Promise.all(everyone.map(balanceOf));
  const sum = (xs) => Math.round(xs.reduce((a, b) => a + b, 0) * 100);
  const payeesGainedMinor = sum(after.slice(payerCount)) - sum(balancesBefore.slice(payerCount));
  const conserved = sum(balancesBefore) === sum(after);
  check(conserved, `transfers ${name}: money before ${sum(balancesBefore)} ≠ after ${sum(after)} (minor units)`);
  check(payeesGainedMinor === sentMinor, `transfers ${name}: payees gained ${payeesGainedMinor}, answered ${sentMinor}`);
  check(
    after.every((balance) => balance >= 0),
    `transfers ${name}: a negative balance`,
  );
  return { result, cost, conserved, sentMinor, payeesGainedMinor };
}

const adminClient = new MarketplaceClient({ baseUrl: base });
await adminClient.signIn(admin.email, admin.password);
const bookings = await benchBookings(adminClient);
const transfers = await benchTransfers('4x4', 4, 4, (job) => job);
const hotPayee = await benchTransfers('hot', 32, 1, () => 0);
const pairs = await benchTransfers('pairs', 32, 32, (_job, worker) => worker);

console.log(
  `\nWrite paths through ${base}, ${connections} connections, ${seconds} s each, price ${price} ETB (${new Date().toISOString()}):\n`,
);
console.log('| case | requests | req/s | p50 ms | p99 ms | CPU ms/op (all processes) | DB commands/op | answers | rules |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|---|');
const SERVERS = ['runner', 'load generator (this bench)'];
const cpuAll = (cost) =>
  cost.cpu
    ? Object.entries(cost.cpu)
        .filter(([name]) => !SERVERS.includes(name))
        .reduce((a, [, ms]) => a + ms, 0)
        .toFixed(1)
    : '–';
const commandsAll = (cost) =>
  cost.commands
    ? Object.values(cost.commands)
        .reduce((a, b) => a + b, 0)
        .toFixed(1)
    : '–';
const row = (name, run, cost, rules) =>
  console.log(
    `| ${name} | ${run.count} | ${run.rate.toFixed(0)} | ${fmt(run.p50)} | ${fmt(run.p99)} | ${cpuAll(cost)} | ${commandsAll(cost)} | ${statusText(run.statuses)} | ${rules} |`,
  );
row('booking confirmed (paid), one buyer per slot', bookings.confirmedRun, bookings.confirmedCost, '–');
row('booking refused (slot taken)', bookings.refusedRun, bookings.refusedCost, '–');
row(
  'bookings, two buyers per one-place slot',
  bookings.result,
  bookings.raceCost,
  `overbooked slots ${bookings.overbooked}; confirmed ${bookings.confirmed}; CRM totals exact: ${bookings.crmExact}`,
);
console.log(
  `| booking → CRM lag (probe, during the race) | ${bookings.lag.n} | – | ${fmt(bookings.lag.p50)} | ${fmt(bookings.lag.p99)} | – | – | – | – |`,
);
for (const [name, run] of /** @type {const} */ ([
  ['transfers, 4 payers → 4 payees', transfers],
  ['transfers, 32 payers → one payee (hot payee)', hotPayee],
  ['transfers, 32 distinct pairs', pairs],
]))
  row(name, run.result, run.cost, `money conserved: ${run.conserved}; payees +${run.payeesGainedMinor} = answered ${run.sentMinor}`);

// Per process: CPU ms per operation (the sum above leaves out the wire relays and the bench itself).
/** @type {Array<[string, ReturnType<typeof perOperation>]>} */
const costs = [
  ['confirmed', bookings.confirmedCost],
  ['refused', bookings.refusedCost],
  ['race', bookings.raceCost],
  ['transfer', transfers.cost],
  ['hot payee', hotPayee.cost],
  ['pairs', pairs.cost],
];
const [, firstCost] = costs[0];
if (firstCost.cpu) {
  console.log(`\nCPU ms per operation by process (/proc/<pid>/stat, user + system, load window until the processes are quiet):\n`);
  console.log(`| process | ${costs.map(([name]) => name).join(' | ')} |`);
  console.log(`|---|${costs.map(() => '---:').join('|')}|`);
  for (const name of Object.keys(firstCost.cpu)) {
    console.log(`| ${name} | ${costs.map(([, cost]) => (cost.cpu?.[name] ?? NaN).toFixed(2)).join(' | ')} |`);
  }
}
if (firstCost.commands) {
  console.log(`\nDatabase commands per operation by client (wire counters of MONGO_WIRE_COUNTER=1 npm start):\n`);
  console.log(`| client | ${costs.map(([name]) => name).join(' | ')} |`);
  console.log(`|---|${costs.map(() => '---:').join('|')}|`);
  for (const name of Object.keys(firstCost.commands)) {
    console.log(`| ${name} | ${costs.map(([, cost]) => (cost.commands?.[name] ?? NaN).toFixed(2)).join(' | ')} |`);
  }
} else {
  console.log('\n(database commands per operation: start the system with MONGO_WIRE_COUNTER=1 to count them)');
}
if (named) {
  // What the whole stack holds once the load is over (the stack's memory target is on the total).
  const memory = memoryMb(named);
  const rows = Object.values(memory);
  const total = (key) => addUp(rows, key);
  const mb = (value) => (value === null ? '–' : value.toFixed(0));
  console.log(
    '\nMemory after the load (MB, each process with its children): RSS (/proc/<pid>/status VmRSS, shared pages counted ' +
      'in every process), PSS (/proc/<pid>/smaps_rollup Pss, shared pages divided among their processes: the sum is ' +
      'what the stack holds), private (Private_Clean + Private_Dirty):\n',
  );
  console.log('| process | RSS | PSS | private |');
  console.log('|---|---:|---:|---:|');
  for (const [name, row] of Object.entries(memory)) console.log(`| ${name} | ${mb(row.rss)} | ${mb(row.pss)} | ${mb(row.private)} |`);
  console.log(`| **the stack** | **${mb(total('rss'))}** | **${mb(total('pss'))}** | **${mb(total('private'))}** |`);
  if (total('pss') === null) console.log('\n(PSS and private: /proc/<pid>/smaps_rollup not readable for every process; RSS only)');
}
if (failures.length > 0) {
  console.error(`\nRULES BROKEN:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log('\nAll rules held.');
