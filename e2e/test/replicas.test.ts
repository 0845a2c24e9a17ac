import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkWallets,
  dayFromNow,
  offerConsultation,
  offerSoonSlot,
  openDatabase,
  pool,
  report,
  slotsOf,
  waitFor,
  waitForSlotStart,
  type Offer,
  type Session,
  type Slot,
  type SoonSlot,
} from './fixtures';
import { startSystem, type System } from './system';

// Several replicas, proven: two instances of every service and two gateways on one
// database and broker (each service's instances behind a round-robin TCP balancer, as behind a
// Kubernetes Service), the write-path load alternating between the gateways, one instance of
// each service and one gateway killed mid-run. Afterwards: no overbooking, money conserved,
// every event applied once by its consumer, no sweep or relay applied twice, every client
// request answered or cleanly refused; and the gateway's limits hold across both gateways.
// REPLICAS_SCALE=n multiplies the buyers and their requests (a longer local soak than CI's).

const SCALE = Math.max(1, Number(process.env.REPLICAS_SCALE ?? 1));
const BUYERS = 9 * SCALE;
const BOOKINGS_PER_BUYER = 5;
const CAPACITY = 2;
const PRICE = 20;
const USER_LIMIT = 150;
const SLOTS_LIMIT = 6;

let system: System;
// Every process's log is kept (system.ts writes them under E2E_LOG_DIR): a failure outside the
// kill's window is shown with the gateways' warnings (an upstream failure says its error code).
const logDir = mkdtempSync(join(tmpdir(), 'replicas-'));
/** The gateways' `upstream failure` lines (what a 502 or 503 came from). */
const upstreamFailures = () =>
  readdirSync(logDir)
    .filter((name) => name.includes('gateway'))
    .flatMap((name) => readFileSync(join(logDir, name), 'utf8').split('\n'))
    .filter((line) => line.includes('"upstream failure"'));
beforeAll(async () => {
  const previous = process.env.E2E_LOG_DIR;
  process.env.E2E_LOG_DIR = logDir;
  try {
    system = await startSystem({
      instances: 2,
      readyTimeoutMs: 90_000,
      envOf: {
        wallet: { LIMIT_DAILY: '1000', LIMIT_WEEKLY: '1000', LIMIT_MONTHLY: '1000' },
        // Every user of the test registers from 127.0.0.1: the registration limit (30 an hour, now
        // across both gateways) is raised for them.
        gateway: {
          RATE_LIMIT_USER_PER_MIN: String(USER_LIMIT),
          RATE_LIMIT_SLOTS_PER_MIN: String(SLOTS_LIMIT),
          RATE_LIMIT_REGISTER_IP_PER_HOUR: '1000',
        },
      },
    });
  } finally {
    if (previous === undefined) delete process.env.E2E_LOG_DIR;
    else process.env.E2E_LOG_DIR = previous;
  }
}, 120_000);
afterAll(async () => {
  await system?.stop();
  rmSync(logDir, { recursive: true, force: true });
}, 60_000);

interface Answer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Connection failures and 5xx met (and retried) before this answer. */
  transient: number[];
  at: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let turn = 0;
/** Every 5xx or broken connection any request met, with when. */
const failures: Array<{ at: number; status: number; what: string }> = [];
/** Connections a dead gateway refused (the request went to the other) and in-flight keys waited out. */
let refused = 0;
let inFlightWaits = 0;

/**
 * A client of the two gateways: requests alternate between them. A refused or broken connection
 * or a 5xx is retried on the next gateway — a read always, a write only when it is safe: with
 * its Idempotency-Key, or (`retryable`) a state change whose repeat is refused cleanly (409).
 */
async function send(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; key?: string; retryable?: boolean; form?: string } = {},
): Promise<Answer> {
  const transient: number[] = [];
  const safe = method === 'GET' || !!options.key || !!options.retryable;
  const started = Date.now();
  for (let attempt = 0; ; attempt += 1) {
    const gateway = system.gateways[turn++ % system.gateways.length]!;
    const headers: Record<string, string> = {};
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.key) headers['idempotency-key'] = options.key;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    let status = 0;
    let body: unknown = null;
    try {
      const res = await fetch(`${gateway}${path}`, {
        method,
        headers,
        body: options.form ?? (options.body === undefined ? undefined : JSON.stringify(options.body)),
        redirect: 'manual',
        signal: AbortSignal.timeout(30_000),
      });
      status = res.status;
      const text = await res.text();
      body = status === 303 ? res.headers.get('location') : text ? JSON.parse(text) : null;
    } catch (err) {
      // Refused: nothing was sent; the next gateway is asked, as a load balancer in front of
      // them would (not a failure the client sees). Reset or timed out: status 0.
      if ((err as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') {
        refused += 1;
        attempt -= 1;
        continue;
      }
    }
    // The first attempt of this key died with its instance: its lease (kit's idempotency, 60 s)
    // must end before a retry takes the key over — the client is told to retry later.
    const inFlight = status === 409 && options.key && /still being processed/.test((body as { message?: string })?.message ?? '');
    if (inFlight && Date.now() - started < 90_000) {
      if (!transient.includes(409)) transient.push(409);
      inFlightWaits += 1;
      await sleep(1_000);
      continue;
    }
    if (status !== 0 && status < 500) return { status, body, transient, at: Date.now() };
    failures.push({ at: Date.now(), status, what: `${method} ${path.replace(/[0-9a-f-]{36}|[A-Z]+-[A-Z-]+-[A-Z0-9]{8}/g, ':id')}` });
    transient.push(status);
    if (!safe || attempt >= 30) return { status, body, transient, at: Date.now() };
    await sleep(100 + attempt * 50);
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- JSON answers, read field by field as in fixtures
async function must(method: string, path: string, options: Parameters<typeof send>[2] = {}): Promise<any> {
  const res = await send(method, path, options);
  if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

async function register(role: 'buyer' | 'seller'): Promise<Session> {
  const email = `${role}-${randomUUID().slice(0, 8)}@example.com`;
  const data = await must('POST', '/v1/auth/register', { body: { email, password: 'a long password', fullName: `A ${role}`, role } });
  return { token: data.accessToken, id: data.user.id, ref: data.user.referenceId, email, role };
}

/** A top-up through the sandbox hosted checkout; the amount when it completed, else 0. */
async function topUp(user: Session, amountMajor: number): Promise<{ created: Answer; paid: Answer | null }> {
  const created = await send('POST', `/wallets/users/${user.ref}/topup`, {
    token: user.token,
    key: randomUUID(),
    body: { amount: amountMajor, paymentMethod: 'Chapa', redirectUrl: 'http://localhost:3000/done' },
  });
  if (created.status !== 200) return { created, paid: null };
  const link = new URL(created.body.data.paymentUrl);
  const form = new URLSearchParams({ token: link.searchParams.get('token')! }).toString();
  const paid = await send('POST', `${link.pathname}/pay`, { form, retryable: true });
  return { created, paid };
}

function bookingBody(buyer: Session, offer: Offer, slot: Slot) {
  return {
    SellerId: offer.sellerId,
    consultationId: offer.id,
    ruleSetId: offer.ruleSetId,
    ...slot,
    participants: [{ fullName: 'A buyer', email: buyer.email, phone: '+251911223344' }],
    subTotal: offer.priceMajor,
    totalAmount: offer.priceMajor,
    currency: 'ETB',
  };
}

/** A seeded pseudo-random sequence: the same contention on every run. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

test('two instances of everything, one of each killed under the write-path load: every invariant holds', async () => {
  // --- the gateway's limits hold across the two gateways (part 1) -----------------
  const adminLogin = await must('POST', '/v1/auth/login', { body: system.admin });
  const admin: Session = {
    token: adminLogin.accessToken,
    id: adminLogin.user.id,
    ref: adminLogin.user.referenceId,
    email: '',
    role: 'admin',
  };
  const probe = await register('buyer');
  const probeStatuses: number[] = [];
  for (let i = 0; i < USER_LIMIT + 10; i += 1) probeStatuses.push((await send('GET', '/v1/wallet', { token: probe.token })).status);
  const slotStatuses: number[] = [];
  for (let i = 0; i < SLOTS_LIMIT + 4; i += 1)
    slotStatuses.push((await send('GET', `/consultations/CON-${i}/slots?from=2030-01-01&to=2030-01-02`)).status);
  const victim = await register('buyer');
  const loginStatuses: number[] = [];
  for (let i = 0; i < 5; i += 1)
    loginStatuses.push((await send('POST', '/v1/auth/login', { body: { email: victim.email, password: 'wrong password' } })).status);
  loginStatuses.push((await send('POST', '/v1/auth/login', { body: { email: victim.email, password: 'a long password' } })).status);

  // --- the market: sellers, limited places, buyers with money --------------------------------
  const sellers = await Promise.all([0, 1, 2].map(() => register('seller')));
  const buyers = await Promise.all(Array.from({ length: BUYERS }, () => register('buyer')));
  const everyone = [...sellers, ...buyers];
  const adminApi = { ...admin, role: 'admin' as const };
  const viaFixtures = { ...system, gateway: system.gateways[0]! };
  // Soon slots first (their sessions are ended after the load, once they have begun).
  const soon: SoonSlot[] = await Promise.all(
    sellers.map((seller) => offerSoonSlot(viaFixtures, seller, adminApi, { priceMajor: PRICE, capacity: 3, leadSeconds: 25 })),
  );
  const offers = await Promise.all(
    sellers.map((seller) =>
      offerConsultation(viaFixtures, seller, adminApi, {
        priceMajor: PRICE,
        capacity: CAPACITY,
        duration: 60,
        from: '09:00:00',
        to: '12:00:00',
      }),
    ),
  );
  const funded = await Promise.all(buyers.map((buyer) => topUp(buyer, 200)));
  expect(funded.every(({ paid }) => paid?.status === 303 && String(paid.body).includes('status=Completed'))).toBe(true);
  const day = dayFromNow(9);
  const next = random(21);
  const pick = <T>(items: T[]) => items[Math.floor(next() * items.length)]!;

  // --- the load, with one instance of each service and one gateway killed mid-run ------------
  const answers: Array<{ kind: string; res: Answer }> = [];
  const record = (kind: string, res: Answer) => {
    answers.push({ kind, res });
    return res;
  };
  const journeys = buyers.map((buyer, index) => {
    const plan = {
      soon: soon[index % soon.length]!,
      bookings: Array.from({ length: BOOKINGS_PER_BUYER }, () => {
        const offer = pick(offers);
        return { offer, slot: pick(slotsOf(offer, day, '09:00', '12:00')) };
      }),
      transfers: [0, 1].map(() => ({ to: pick(everyone.filter((user) => user !== buyer)), amount: Math.floor(next() * 30_00) + 1 })),
      cancels: next() < 0.6,
    };
    const sendTransfer = async (transfer: (typeof plan.transfers)[number]) =>
      record(
        'transfer',
        await send('POST', '/v1/wallet/transfers', {
          token: buyer.token,
          key: randomUUID(),
          body: { toUserId: transfer.to.id, amount: transfer.amount, currency: 'ETB' },
        }),
      );
    return async () => {
      const soonBooked = record(
        'booking',
        await send('POST', '/consultations/bookings', {
          token: buyer.token,
          key: randomUUID(),
          body: bookingBody(buyer, plan.soon.offer, plan.soon.slot),
        }),
      );
      const confirmed: string[] = [];
      for (const [i, { offer, slot }] of plan.bookings.entries()) {
        const key = randomUUID();
        const body = bookingBody(buyer, offer, slot);
        const booked = record('booking', await send('POST', '/consultations/bookings', { token: buyer.token, key, body }));
        if (booked.status === 200) {
          confirmed.push(booked.body.data.bookingId);
          // A client's retry of an answered booking: the same answer, nothing booked twice.
          if (i === 0) {
            const again = await send('POST', '/consultations/bookings', { token: buyer.token, key, body });
            record('booking-retry', {
              ...again,
              status: again.status === 200 && again.body.data.bookingId === booked.body.data.bookingId ? 200 : -1,
            });
          }
        }
        if (i === 1) await sendTransfer(plan.transfers[0]!);
        if (i === 2) {
          const { created, paid } = await topUp(buyer, 50);
          record('topup', created);
          if (paid) record('topup-pay', paid);
        }
      }
      await sendTransfer(plan.transfers[1]!);
      if (plan.cancels && confirmed.length > 0)
        record(
          'cancel',
          await send('POST', '/consultations/bookings/cancel', {
            token: buyer.token,
            retryable: true,
            body: { bookingId: confirmed[0], reason: 'Plans changed' },
          }),
        );
      return soonBooked;
    };
  });
  const loadStarted = Date.now();
  let killedAt = 0;
  const killing = (async () => {
    await sleep(2_500);
    killedAt = Date.now();
    // SIGKILL (no drain, in-flight requests and messages cut) for all but the catalog, which
    // gets SIGTERM (the orderly path a rolling update takes).
    await Promise.all([
      ...(['wallet', 'crm', 'consultation', 'review', 'gateway'] as const).map((name) => system.replicas[name][1]!.kill('SIGKILL')),
      system.replicas.catalog[1]!.kill('SIGTERM'),
    ]);
  })();
  await pool(BUYERS, journeys);
  await killing;
  const loadSeconds = (Date.now() - loadStarted) / 1000;

  // --- sessions of the soon slots: started, ended once begun → capture decided, reviews ------
  const consultationDb = await openDatabase(system.mongoUrl, system.dbName('consultation'));
  await waitFor(
    'no booking still waiting on the wallet',
    () => consultationDb.collection('bookings').countDocuments({ status: { $in: ['Pending', 'PaymentPending'] } }),
    (left) => left === 0,
    30_000,
  );
  const soonBookings = await consultationDb
    .collection('bookings')
    .find({ status: 'Confirmed', consultationId: { $in: soon.map((s) => s.offer.id) } })
    .toArray();
  await waitForSlotStart(new Date(Math.max(...soon.map((s) => s.startsAt.getTime()))));
  const sessionIds = [...new Set(soonBookings.map((booking) => booking.sessionId as string))];
  for (const sessionId of sessionIds) {
    const seller = sellers.find((s) => s.id === soonBookings.find((b) => b.sessionId === sessionId)!.sellerId)!;
    record(
      'session-start',
      await send('POST', `/consultations/sessions/${sessionId}/start`, { token: seller.token, body: {}, retryable: true }),
    );
    record(
      'session-end',
      await send('POST', `/consultations/sessions/${sessionId}/end`, { token: seller.token, body: {}, retryable: true }),
    );
  }
  const reviewers = soonBookings.map((booking) => ({
    buyer: buyers.find((b) => b.id === booking.buyerId)!,
    offerId: booking.consultationId as string,
  }));
  await Promise.all(
    reviewers.map(async ({ buyer, offerId }) => {
      await waitFor(
        'review eligibility',
        async () => (await send('GET', `/reviews/consultation/${offerId}/status`, { token: buyer.token })).body?.data?.canReview,
        (canReview) => canReview === true,
        30_000,
      );
      record(
        'review',
        await send('POST', '/reviews', {
          token: buyer.token,
          retryable: true,
          body: { entityType: 'consultation_service', entityId: offerId, rating: 4 },
        }),
      );
    }),
  );

  // --- invariants --------------------------------------------------------------------------
  const capacityOf = new Map([...offers.map((o) => [o.id, o.capacity] as const), ...soon.map((s) => [s.offer.id, 3] as const)]);
  const live = await consultationDb.collection('bookings').find({ status: 'Confirmed' }).toArray();
  const placesPerSlot = new Map<string, { places: number; capacity: number }>();
  for (const booking of live) {
    const slot = placesPerSlot.get(booking.slotKey as string) ?? { places: 0, capacity: capacityOf.get(booking.consultationId as string)! };
    slot.places += booking.places as number;
    placesPerSlot.set(booking.slotKey as string, slot);
  }
  const overbooked = [...placesPerSlot].filter(([, slot]) => slot.places > slot.capacity);
  const slotPlaces = await consultationDb.collection('slot_places').find().toArray();
  const counterDrift = slotPlaces.filter((place) => (place.booked as number) !== (placesPerSlot.get(place._id as string)?.places ?? 0));

  const ended = await waitFor(
    'every transfer finished and every settlement applied',
    () => checkWallets(system),
    (check) => !check.transfersByStatus.Pending && !check.transfersByStatus.Debited,
    30_000,
  );
  const walletDb = await openDatabase(system.mongoUrl, system.dbName('wallet'));
  const cancelledIds = (
    await consultationDb
      .collection('bookings')
      .find({ status: 'Cancelled', totalAmountMinor: { $gt: 0 } })
      .toArray()
  ).map((booking) => booking._id as string);
  // A cancel's refund is applied at once (a capture waits for the slot's end): every one settles.
  const holds = await waitFor(
    'every cancelled booking refunded',
    () => walletDb.collection('booking_holds').find().toArray(),
    (all) => all.filter((hold) => cancelledIds.includes(hold._id as string)).every((hold) => hold.status === 'Settled'),
    30_000,
  );
  // No money stays held for a booking that was not made (a sweep releases it).
  const madeIds = new Set([...live.map((booking) => booking._id as string), ...cancelledIds]);
  const strandedHolds = (
    await waitFor(
      'every hold of a booking not made released',
      () => walletDb.collection('booking_holds').find().toArray(),
      (all) => all.every((hold) => madeIds.has(hold._id as string) || !['Pending', 'Held'].includes(hold.status as string)),
      30_000,
    ).catch(async () => walletDb.collection('booking_holds').find().toArray())
  ).filter((hold) => !madeIds.has(hold._id as string) && ['Pending', 'Held'].includes(hold.status as string));
  const entries = await walletDb.collection('ledger_entries').find().toArray();
  await walletDb.close();
  // A sweep or relay that applied a step twice leaves two entries of one kind for one record on one wallet.
  const perStep = new Map<string, number>();
  for (const entry of entries) {
    const step = `${entry.walletId}|${entry.type}|${entry.reference}`;
    perStep.set(step, (perStep.get(step) ?? 0) + 1);
  }
  const appliedTwice = [...perStep].filter(([, n]) => n > 1);
  const paidBookings = await consultationDb
    .collection('bookings')
    .find({ totalAmountMinor: { $gt: 0 }, status: { $in: ['Confirmed', 'Cancelled'] } })
    .toArray();
  const holdIds = new Set(holds.map((hold) => hold._id as string));
  const unpaid = paidBookings.filter((booking) => !holdIds.has(booking._id as string));
  const holdsOfLiveBookings = holds.filter((hold) => live.some((booking) => booking._id === hold._id));
  const heldForLive = holdsOfLiveBookings.filter((hold) => !['Held', 'Settling', 'Settled'].includes(hold.status as string));

  // Every booking event applied once by the CRM: its totals are the live bookings.
  const crmTotal = await waitFor(
    'the CRM to count the confirmed bookings',
    async () => {
      let total = 0;
      for (const seller of sellers) {
        const listed = await send('GET', `/customers/seller/${seller.id}?limit=100`, { token: seller.token });
        for (const row of listed.body?.data?.customers ?? []) total += row.totalBookings;
      }
      return total;
    },
    (total) => total === live.length,
    30_000,
  ).catch(() => -1);
  // Every review applied once to the consultation's rating.
  const reviewsOk = answers.filter(({ kind, res }) => kind === 'review' && res.status === 200).length;
  const rated = await waitFor(
    'the ratings to count the reviews',
    async () => {
      let total = 0;
      for (const { offer } of soon) total += (await send('GET', `/consultations/${offer.id}`)).body?.data?.totalReviews ?? 0;
      return total;
    },
    (total) => total === reviewsOk,
    30_000,
  ).catch(() => -1);
  await consultationDb.close();

  const tally: Record<string, Record<string, number>> = {};
  for (const { kind, res } of answers) {
    const key = res.status === 200 || res.status === 303 ? String(res.status) : `${res.status}:${res.body?.errors?.[0]?.code ?? ''}`;
    tally[kind] = tally[kind] ?? {};
    tally[kind]![key] = (tally[kind]![key] ?? 0) + 1;
  }
  const clean = (kind: string, res: Answer) =>
    res.status === 200 ||
    (kind.startsWith('topup-pay') && res.status === 303) ||
    (kind === 'booking' && res.status === 422 && ['slot_unavailable', 'insufficient_funds'].includes(res.body?.errors?.[0]?.code)) ||
    (kind === 'transfer' && res.status === 422 && res.body?.errors?.[0]?.code === 'insufficient_funds') ||
    // A booking whose first attempt the kill cut while the wallet was asked: given up by the
    // consultation's sweep at its deadline, not made, nothing kept (checked below).
    (kind === 'booking' && res.transient.length > 0 && res.status === 422 && res.body?.errors?.[0]?.code === 'payment_failed') ||
    // A retried state change (no key) that the first try had already made.
    (kind !== 'booking' && kind !== 'transfer' && kind !== 'topup' && res.transient.length > 0 && res.status === 409);
  const unclean = answers.filter(({ kind, res }) => !clean(kind, res));
  // Each with its time from the kill (negative: before it), for a failure's post-mortem.
  const outsideKill = failures
    .filter((failure) => failure.at < killedAt || failure.at > killedAt + 20_000)
    .map((failure) => ({ ...failure, msFromKill: failure.at - killedAt }));
  const apiTotal = (await Promise.all(everyone.map((user) => must('GET', '/v1/wallet', { token: user.token })))).reduce(
    (sum, wallet) => sum + Math.round(wallet.etbAvailableBalance * 100) + Math.round((wallet.heldBalance ?? 0) * 100),
    0,
  );
  report('replicas', {
    scale: SCALE,
    buyers: BUYERS,
    loadSeconds,
    requests: answers.length,
    outcomes: JSON.stringify(tally),
    transientFailures: failures.length,
    refusedByDeadGateway: refused,
    inFlightKeyWaits: inFlightWaits,
    transientByKind: JSON.stringify(
      failures.reduce<Record<string, number>>((acc, f) => ({ ...acc, [`${f.status}`]: (acc[`${f.status}`] ?? 0) + 1 }), {}),
    ),
    liveBookings: live.length,
    overbooked: overbooked.length,
    counterDrift: counterDrift.length,
    crmTotal,
    reviews: reviewsOk,
    rated,
    ledgerEntries: entries.length,
    appliedTwice: appliedTwice.length,
    strandedHolds: strandedHolds.length,
    holds: JSON.stringify(
      holds.reduce<Record<string, number>>((acc, h) => ({ ...acc, [h.status as string]: (acc[h.status as string] ?? 0) + 1 }), {}),
    ),
    moneyInMinor: ended.completedTopUpsMinor,
    moneyHeldMinor: ended.availableMinor + ended.heldMinor,
    apiTotal,
    balancerConnections: JSON.stringify(
      Object.fromEntries(Object.entries(system.balancers).map(([name, b]) => [name, [...b!.connections.values()]])),
    ),
  });

  expect(probeStatuses.filter((status) => status === 200)).toHaveLength(USER_LIMIT);
  expect(probeStatuses.slice(USER_LIMIT)).toEqual(Array(10).fill(429));
  // The first SLOTS_LIMIT reach the consultation service (404: no such consultation), then 429.
  expect(slotStatuses.slice(0, SLOTS_LIMIT).filter((status) => status === 429)).toEqual([]);
  expect(slotStatuses.slice(SLOTS_LIMIT)).toEqual(Array(4).fill(429));
  expect(loginStatuses).toEqual([401, 401, 401, 401, 401, 429]);

  expect(unclean.map(({ kind, res }) => ({ kind, status: res.status, body: res.body, transient: res.transient }))).toEqual([]);
  expect({ outsideKill, gateways: outsideKill.length > 0 ? upstreamFailures() : [] }).toEqual({ outsideKill: [], gateways: [] });
  expect(overbooked).toEqual([]);
  expect(counterDrift).toEqual([]);
  expect(live.length).toBeGreaterThan(0);
  expect(ended.mismatched).toEqual([]);
  expect(ended.availableMinor + ended.heldMinor).toBe(ended.completedTopUpsMinor - ended.settledPayoutsMinor);
  expect(apiTotal).toBe(ended.completedTopUpsMinor);
  expect(appliedTwice).toEqual([]);
  expect(strandedHolds.map((hold) => ({ id: hold._id, status: hold.status }))).toEqual([]);
  expect(unpaid.map((booking) => booking._id)).toEqual([]);
  expect(heldForLive.map((hold) => ({ id: hold._id, status: hold.status }))).toEqual([]);
  expect(crmTotal).toBe(live.length);
  expect(reviewsOk).toBeGreaterThan(0);
  expect(rated).toBe(reviewsOk);
}, 240_000);
