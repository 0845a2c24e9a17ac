// The load of `npm run k8s:e2e` (scripts/k8s-e2e.mjs) through the gateway, while Deployments
// roll or pods die: buyers race two by two for one-place paid slots, payers send money to payees.
// The requests as bench/writes.mjs makes them (the same endpoints, bodies and rules), with what a
// client of a rolling system does: every write carries an Idempotency-Key and is retried with the
// same key on a connection error or a 502/503/504 (ADR 0010: the key makes the retry return the
// first answer, never a second hold or transfer), and asked again every few seconds while it is
// answered 409 "still being processed" (the first attempt died with its pod: its key is taken
// over after its lease). Afterwards the rules, waiting for the events to
// be in:
//   - no slot holds more than its one place; the seller's Confirmed bookings are exactly those
//     answered Confirmed (a retried booking made once), and those answered PaymentPending (the
//     wallet's answer did not come in time: a pod killed under the hold) that the sweep then
//     confirmed;
//   - every booking settled: none left PaymentPending (the saga and its sweeps; an in-flight
//     Pending one is not listed, its hold shows in the buyer's wallet);
//   - each buyer's wallet: the top-up less the price of each Confirmed booking, held, nothing
//     else (refused and failed bookings released; no hold taken twice);
//   - transfers: the money of payers and payees together unchanged, the payees gained exactly
//     what was answered Completed, no negative balance;
//   - the CRM's totals per buyer equal its Confirmed bookings (each booking event handled once).
/* global AbortSignal */
import { randomUUID } from 'node:crypto';
import { messageOf } from '../lib/errors.mjs';
import { onePlaceAllDay, pathOf, seedBookableConsultation } from '../lib/seed.mjs';
import { bookingBody, sdk } from '../marketplace-client.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const RETRIABLE = new Set([502, 503, 504]);
// A retry that finds its key still owned by an attempt (409: "still being processed") waits, as a
// client must: when that attempt died with its pod, the key is taken over only after its lease
// (kit's IDEMPOTENCY_LEASE_MS, 60 s), and the retry then finishes what it began.
const IN_FLIGHT_WAIT_MS = 75_000;
const IN_FLIGHT_POLL_MS = 3_000;
const inFlight = (res) => res.status === 409 && /still being processed/.test(res.body?.message ?? '');
const PRICE = 10;
const TOP_UP = 10_000;

/** @param {string} base the gateway */
export function loadClient(base) {
  /**
   * @param {string} method
   * @param {string} path
   * @param {{ body?: unknown, token?: string, key?: string }} [options]
   */
  const call = async (method, path, { body, token, key } = {}) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: res.status, body: json };
  };
  /** A call retried like a client of a rolling system: setup calls, reads. Throws unless 200. */
  const must = async (method, path, options) => {
    let last;
    for (let attempt = 0; attempt < 8; attempt += 1) {
      try {
        const res = await call(method, path, options);
        if (res.status === 200) return res.body.data;
        last = `${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
        if (!RETRIABLE.has(res.status)) break;
      } catch (err) {
        last = messageOf(err);
      }
      await sleep(500 * (attempt + 1));
    }
    throw new Error(`${method} ${path}: ${last}`);
  };
  return { call, must };
}

/** People, a consultation with one-place paid slots, funded wallets: what one scenario needs. */
export async function prepareLoad(base, admin, { buyers: buyerCount = 6, pairs = 3, tag = 'load' } = {}) {
  const { must, call } = loadClient(base);
  const runId = `${tag}-${Date.now().toString(36)}`;
  const register = async (role, name) => {
    const data = await must('POST', '/v1/auth/register', {
      body: { email: `${runId}-${name}@example.com`, password: 'a long k8s e2e password', fullName: `K8s ${runId} ${name}`, role },
    });
    return { token: data.accessToken, id: data.user.id, ref: data.user.referenceId, name: `K8s ${runId} ${name}` };
  };
  const walletOpen = async (user) => {
    for (let i = 0; i < 120; i += 1) {
      if ((await call('GET', '/v1/wallet', { token: user.token }).catch(() => ({ status: 0 }))).status === 200) return;
      await sleep(250);
    }
    throw new Error(`the wallet of ${user.name} did not open`);
  };
  const fund = async (user, amount) => {
    await walletOpen(user);
    const topUp = await must('POST', `/wallets/users/${user.ref}/topup`, {
      token: user.token,
      key: randomUUID(),
      body: { amount, paymentMethod: 'Chapa', redirectUrl: `${base}/done` },
    });
    // The sandbox's hosted checkout, as a client pays it (the project's SDK: no token needed).
    const { MarketplaceClient } = await sdk();
    await new MarketplaceClient({ baseUrl: base }).payInSandbox(topUp.paymentUrl);
  };
  const adminToken = (await must('POST', '/v1/auth/login', { body: admin })).accessToken;
  const seller = await register('seller', 'seller');
  const buyers = [];
  for (let i = 0; i < buyerCount; i += 1) buyers.push(await register('buyer', `buyer${i}`));
  const payers = [];
  const payees = [];
  for (let i = 0; i < pairs; i += 1) {
    payers.push(await register('buyer', `payer${i}`));
    payees.push(await register('seller', `payee${i}`));
  }
  await Promise.all([...buyers, ...payers].map((user) => fund(user, TOP_UP)));
  await Promise.all(payees.map(walletOpen));

  /** A seed `Caller` over `must` with `token`: retried as every setup call is. */
  const as = (token) => (method, path, body, params) => must(method, pathOf(path, params), { token, body });
  const { ruleSet, consultation } = await seedBookableConsultation(
    { seller: as(seller.token), admin: as(adminToken) },
    onePlaceAllDay({ name: 'K8s e2e: all day', title: 'K8s e2e consultation', price: PRICE }),
  );
  const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
  const slots = [];
  for (let from = 1; from <= 15; from += 7) {
    const listed = await must('GET', `/consultations/${consultation.id}/slots?from=${day(from)}&to=${day(Math.min(from + 6, 15))}`);
    slots.push(...listed.slots);
  }
  const everyone = [...payers, ...payees];
  const balanceOf = async (user) => (await must('GET', '/v1/wallet', { token: user.token })).etbAvailableBalance;
  const balancesBefore = await Promise.all(everyone.map(balanceOf));
  return { base, seller, buyers, payers, payees, consultation, ruleSet, slots, balancesBefore };
}

/**
 * Runs the load until `stop()` is called: `workers` booking workers and as many transfer workers.
 * Returns { stop: async () => tally } — the tally of every request.
 */
export function startLoad(prepared, { workers = 3 } = {}) {
  const { call } = loadClient(prepared.base);
  const { seller, consultation, ruleSet, slots, buyers, payers, payees } = prepared;
  const tally = {
    requests: 0,
    retried: 0, // attempts that failed with a connection error or 502/503/504 and were retried
    failed: /** @type {string[]} */ ([]), // requests that still failed after their retries, or answered what they must not
    statuses: new Map(),
    confirmedBy: new Map(),
    bookings: { asked: 0, confirmed: 0, refused: 0 },
    // Bookings answered PaymentPending: settled later by the sweep, Confirmed or Failed.
    pending: /** @type {Array<{ buyerId: string, bookingId: string }>} */ ([]),
    transfers: { asked: 0, completed: 0, sentMinor: 0 },
    startedAt: Date.now(),
  };
  let stopping = false;
  const count = (label) => tally.statuses.set(label, (tally.statuses.get(label) ?? 0) + 1);
  /** One write, retried under the same key (8 attempts over ~20 s: a pod's drain and replacement). */
  const write = async (what, path, token, body) => {
    const key = randomUUID();
    tally.requests += 1;
    let last;
    let waitingSince = 0;
    for (let attempt = 0; attempt < 8; attempt += 1) {
      try {
        const res = await call('POST', path, { token, body, key });
        last = `${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
        if (inFlight(res)) {
          waitingSince ||= Date.now();
          if (Date.now() - waitingSince < IN_FLIGHT_WAIT_MS) {
            count(`${what} waited for its key`);
            attempt -= 1; // waiting out a dead attempt's lease is not one of the retries
            await sleep(IN_FLIGHT_POLL_MS);
            continue;
          }
          break;
        }
        if (!RETRIABLE.has(res.status)) return res;
      } catch (err) {
        last = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      }
      tally.retried += 1;
      count(`${what} retried`);
      await sleep(250 * 2 ** Math.min(attempt, 4));
    }
    tally.failed.push(`${what}: ${last} (after its retries)`);
    return null;
  };
  let slotAsks = 0;
  const bookingWorker = async (worker) => {
    while (!stopping) {
      const index = Math.floor(slotAsks / 2);
      if (index >= slots.length) break;
      // Two buyers for each slot, one after the other from different workers.
      slotAsks += 1;
      const buyer = buyers[(slotAsks + worker) % buyers.length];
      const slot = slots[index];
      const body = bookingBody(
        { seller, consultation, ruleSet },
        slot,
        { fullName: buyer.name, email: `${buyer.ref.toLowerCase()}@example.com`, phone: '+251911000000' },
        PRICE,
      );
      tally.bookings.asked += 1;
      const res = await write('booking', '/consultations/bookings', buyer.token, body);
      if (!res) continue;
      count(`booking ${res.status}`);
      if (res.status === 200 && res.body?.data?.status === 'Confirmed') {
        tally.bookings.confirmed += 1;
        tally.confirmedBy.set(buyer.id, (tally.confirmedBy.get(buyer.id) ?? 0) + 1);
      } else if (res.status === 200 && res.body?.data?.status === 'PaymentPending' && res.body.data.bookingId)
        tally.pending.push({ buyerId: buyer.id, bookingId: res.body.data.bookingId });
      else if (res.status === 422 && res.body?.errors?.some((e) => e.code === 'slot_unavailable')) tally.bookings.refused += 1;
      else tally.failed.push(`booking: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
    }
  };
  let transfers = 0;
  const transferWorker = async (worker) => {
    while (!stopping) {
      const payer = payers[worker % payers.length];
      const payee = payees[transfers++ % payees.length];
      tally.transfers.asked += 1;
      const res = await write('transfer', '/v1/wallet/transfers', payer.token, { toUserId: payee.id, amount: 100, currency: 'ETB' });
      if (!res) continue;
      count(`transfer ${res.status}`);
      if (res.status === 200 && res.body?.data?.status === 'Completed') {
        tally.transfers.completed += 1;
        tally.transfers.sentMinor += 100;
      } else tally.failed.push(`transfer: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
      await sleep(50);
    }
  };
  const running = Promise.all([
    ...Array.from({ length: workers }, (_, w) => bookingWorker(w)),
    ...Array.from({ length: workers }, (_, w) => transferWorker(w)),
  ]);
  return {
    tally,
    stop: async () => {
      stopping = true;
      await running;
      tally.seconds = (Date.now() - tally.startedAt) / 1000;
      return tally;
    },
  };
}

/** Polls until `probe` returns { ok: true, … } or the time is up; returns the last answer. */
async function eventually(probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last.ok) return last;
    } catch (err) {
      last = { ok: false, detail: messageOf(err) };
    }
    if (Date.now() > deadline) return last;
    await sleep(1_000);
  }
}

/** The rules after a scenario's load; returns rows [rule, ok, detail]. */
export async function checkInvariants(prepared, tally, { settleMs = 120_000 } = {}) {
  const { must } = loadClient(prepared.base);
  const { seller, buyers, payers, payees, balancesBefore } = prepared;
  const rows = [];
  const rule = (name, ok, detail) => rows.push([name, ok, detail]);
  rule(
    'requests answered (retries under the same Idempotency-Key)',
    tally.failed.length === 0,
    `${tally.requests} writes, ${tally.retried} retried attempts, ${tally.failed.length} failed${tally.failed.length ? `: ${tally.failed.slice(0, 3).join(' | ')}` : ''}`,
  );
  // Every booking settled (the saga, its sweeps), then each slot at most once.
  const bookings = await eventually(async () => {
    const all = [];
    // The list's default (PaymentPending, Confirmed, Cancelled), then Failed; an in-flight
    // `Pending` booking is never listed: a stuck one shows in the buyers' money below.
    for (const status of ['', 'Failed']) {
      for (let page = 1; ; page += 1) {
        const listed = await must('GET', `/consultations/bookings?page=${page}&limit=100${status ? `&status=${status}` : ''}`, {
          token: seller.token,
        });
        all.push(...listed.bookings);
        if (page * 100 >= listed.pagination.total) break;
      }
    }
    const byStatus = {};
    for (const b of all) byStatus[b.status] = (byStatus[b.status] ?? 0) + 1;
    return { ok: (byStatus.PaymentPending ?? 0) === 0, all, byStatus, detail: JSON.stringify(byStatus) };
  }, settleMs);
  rule('every booking settled (none PaymentPending)', bookings.ok, bookings.detail);
  // What each booking answered PaymentPending became: Confirmed ones count as answered Confirmed.
  const settledAs = new Map((bookings.all ?? []).map((b) => [b.id, b.status]));
  const confirmedBy = new Map(tally.confirmedBy);
  let answeredConfirmed = tally.bookings.confirmed;
  const unsettled = [];
  for (const { buyerId, bookingId } of tally.pending) {
    const status = settledAs.get(bookingId);
    if (status === 'Confirmed') {
      answeredConfirmed += 1;
      confirmedBy.set(buyerId, (confirmedBy.get(buyerId) ?? 0) + 1);
    } else if (status !== 'Failed') unsettled.push(`${bookingId}: ${status ?? 'not listed'}`);
  }
  rule(
    'bookings answered PaymentPending settled (Confirmed or Failed)',
    unsettled.length === 0,
    `${tally.pending.length} answered PaymentPending${unsettled.length ? `; unsettled: ${unsettled.slice(0, 3).join(', ')}` : ''}`,
  );
  const perSlot = new Map();
  for (const b of (bookings.all ?? []).filter((b) => b.status === 'Confirmed'))
    perSlot.set(`${b.date} ${b.startTime}`, (perSlot.get(`${b.date} ${b.startTime}`) ?? 0) + 1);
  const overbooked = [...perSlot.values()].filter((n) => n > 1).length;
  const listedConfirmed = [...perSlot.values()].reduce((a, b) => a + b, 0);
  rule('no slot over its capacity (1)', overbooked === 0, `${perSlot.size} slots booked, ${overbooked} over capacity`);
  rule(
    'Confirmed bookings = those answered Confirmed',
    listedConfirmed === answeredConfirmed,
    `${listedConfirmed} listed, ${answeredConfirmed} answered or settled Confirmed (${tally.bookings.refused} refused slot_unavailable)`,
  );
  // Booking money: each buyer holds the price of each Confirmed booking, no more, no less.
  const wallets = await eventually(async () => {
    const wrong = [];
    let held = 0;
    for (const buyer of buyers) {
      const w = await must('GET', '/v1/wallet', { token: buyer.token });
      const expectedHeld = PRICE * (confirmedBy.get(buyer.id) ?? 0);
      held += w.heldBalance;
      if (
        Math.round(w.heldBalance * 100) !== expectedHeld * 100 ||
        Math.round((w.etbAvailableBalance + w.heldBalance) * 100) !== TOP_UP * 100
      )
        wrong.push(`${buyer.name}: available ${w.etbAvailableBalance} held ${w.heldBalance}, expected held ${expectedHeld}`);
    }
    return {
      ok: wrong.length === 0,
      detail: wrong.length
        ? wrong.slice(0, 3).join('; ')
        : `${buyers.length} buyers: ${held} ETB held = ${PRICE} × ${answeredConfirmed} bookings; available + held = the top-up`,
    };
  }, settleMs);
  rule('booking money: held = price × Confirmed, nothing lost', wallets.ok, wallets.detail);
  // Transfers: conserved between payers and payees, payees gained what was answered.
  const everyone = [...payers, ...payees];
  const after = await Promise.all(
    everyone.map(async (user) => (await must('GET', '/v1/wallet', { token: user.token })).etbAvailableBalance),
  );
  const sum = (xs) => Math.round(xs.reduce((a, b) => a + b, 0) * 100);
  const gained = sum(after.slice(payers.length)) - sum(balancesBefore.slice(payers.length));
  rule(
    'transfers: money conserved, payees gained what was answered',
    sum(after) === sum(balancesBefore) && gained === tally.transfers.sentMinor && after.every((b) => b >= 0),
    `${tally.transfers.completed} Completed; total ${sum(balancesBefore)} → ${sum(after)} minor units; payees +${gained}, answered ${tally.transfers.sentMinor}`,
  );
  // Each booking event handled once: the CRM's totals per buyer.
  const crm = await eventually(async () => {
    const listed = await must('GET', `/customers/seller/${seller.id}?limit=100`, { token: seller.token });
    const byName = new Map(listed.customers.map((c) => [c.buyerName, c]));
    const wrong = [];
    for (const buyer of buyers) {
      const want = confirmedBy.get(buyer.id) ?? 0;
      const got = byName.get(buyer.name)?.totalBookings ?? 0;
      const spent = byName.get(buyer.name)?.totalSpent ?? 0;
      if (got !== want || spent !== want * PRICE) wrong.push(`${buyer.name}: ${got} bookings / ${spent} ETB, expected ${want}`);
    }
    return {
      ok: wrong.length === 0,
      detail: wrong.length ? wrong.slice(0, 3).join('; ') : `${buyers.length} buyers' totals = their Confirmed bookings`,
    };
  }, settleMs);
  rule('each booking event handled once (CRM totals)', crm.ok, crm.detail);
  return rows;
}
