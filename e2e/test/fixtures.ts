import { createRequire } from 'node:module';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import { call, connectAmqp, waitFor as waitUntil, type JsonResponse } from '@mkt/infra';
import type * as Seed from '../../scripts/lib/seed.mjs' with { 'resolution-mode': 'import' };
import { eventually, startSystem, type System } from './system';

/** The seeding the scripts and benches share (an ES module: jest loads it through SWC, e2e/jest.config.js). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const seed = require('../../scripts/lib/seed.mjs') as typeof Seed;

/** What the fault and load tests share: users, a bookable consultation, money, audits, reports. */

export interface Session {
  token: string;
  id: string;
  ref: string;
  email: string;
  role: 'buyer' | 'seller' | 'admin';
}

export const ZONE = 'Africa/Addis_Ababa';

export type Api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => Promise<JsonResponse>;

export function apiOf(system: System, session?: Pick<Session, 'token'>): Api {
  return (method, path, body, headers) => call(system.gateway, method, path, { token: session?.token, body, headers });
}

let counter = 0;
export async function register(system: System, role: 'buyer' | 'seller', fullName = `A ${role}`): Promise<Session> {
  counter += 1;
  const email = `${role}-${counter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const res = await apiOf(system)('POST', '/v1/auth/register', { email, password: 'a long password', fullName, role });
  if (res.status !== 200) throw new Error(`register ${role}: ${res.status} ${JSON.stringify(res.body)}`);
  return { token: res.body.data.accessToken, id: res.body.data.user.id, ref: res.body.data.user.referenceId, email, role };
}

export async function loginAdmin(system: System): Promise<Session> {
  const res = await apiOf(system)('POST', '/v1/auth/login', system.admin);
  if (res.status !== 200) throw new Error(`admin login: ${res.status} ${JSON.stringify(res.body)}`);
  const user = res.body.data.user;
  return { token: res.body.data.accessToken, id: user.id, ref: user.referenceId, email: system.admin.email, role: 'admin' };
}

/**
 * A system of the test file's own, started before its tests with the seeded admin signed in and
 * stopped after them: `started` is given both (a file assigns them to its own variables).
 */
export function systemWithAdmin(started: (given: { system: System; admin: Session }) => void, timeoutMs = 120_000): void {
  let system: System | undefined;
  beforeAll(async () => {
    system = await startSystem();
    started({ system, admin: await loginAdmin(system) });
  }, timeoutMs);
  afterAll(() => system?.stop());
}

/** An entry of the admins' audit log (`GET /v1/admin/audit-log`). */
export interface AuditEntry {
  id: string;
  action: string;
  actorId: string;
  actorRole: string;
  targetType: string;
  targetId: string;
  requestId: string;
  clientAddress: string | null;
  service: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  notes: string | null;
  at: string;
}

/**
 * The audit log's entries of one target, read by the admin once `count` are there; then, `settleMs`
 * later, read again: exactly `count` still (every event of an action goes out right after its
 * write, so a stray second entry would have landed).
 */
export async function auditEntriesOf(
  system: System,
  admin: Session,
  targetId: string,
  count: number,
  settleMs = 1_000,
): Promise<AuditEntry[]> {
  const read = async () =>
    (await apiOf(system, admin)('GET', `/v1/admin/audit-log?targetId=${encodeURIComponent(targetId)}&limit=100`)).body.data
      .entries as AuditEntry[];
  await waitFor(`${count} audit entries of ${targetId}`, read, (entries) => entries.length >= count);
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return read();
}

export interface Offer {
  id: string;
  referenceId: string;
  ruleSetId: string;
  sellerId: string;
  priceMajor: number;
  duration: number;
  capacity: number;
  /** The IANA zone its rule set's wall-clock intervals are in. */
  timezone: string;
}

/** A consultation open every day of the week from `from` to `to`, approved by the admin. */
export async function offerConsultation(
  system: System,
  seller: Session,
  admin: Session,
  options: {
    priceMajor?: number;
    duration?: number;
    capacity?: number;
    from?: string;
    to?: string;
    maxBookingsPerDay?: number;
    timezone?: string;
    /** Every day's intervals, `[start, end]` wall clock; `from`–`to` when not given. */
    intervals?: Array<[string, string]>;
  } = {},
): Promise<Offer> {
  const { priceMajor = 100, duration = 30, capacity = 1, from = '06:00:00', to = '18:00:00', maxBookingsPerDay = 1000 } = options;
  const timezone = options.timezone ?? ZONE;
  const intervals = options.intervals ?? [[from, to]];
  const { ruleSet, consultation } = await seed.seedBookableConsultation(
    { seller: seed.responseCaller(apiOf(system, seller)), admin: seed.responseCaller(apiOf(system, admin)) },
    {
      ruleSet: { name: 'Every day', timezone, metaData: { autoAccept: true, bufferTime: 0, maxBookingsPerDay }, intervals, enabled: true },
      pricing: { basePrice: priceMajor },
      consultation: {
        title: `Consultation ${Math.random().toString(36).slice(2, 8)}`,
        duration,
        sessionType: capacity === 1 ? 'OneToOne' : 'Group',
        maxCapacity: capacity,
      },
    },
  );
  return {
    id: consultation.id,
    referenceId: consultation.referenceId,
    ruleSetId: ruleSet.id,
    sellerId: seller.id,
    priceMajor,
    duration,
    capacity,
    timezone,
  };
}

/** `YYYY-MM-DD` in the consultations' zone, `days` from today. */
export function dayFromNow(days: number): string {
  return DateTime.now().setZone(ZONE).plus({ days }).toFormat('yyyy-MM-dd');
}

export interface Slot {
  date: string;
  startTime: string;
  endTime: string;
}

/** Every slot of a day (free or not), from the rule set's hours and the duration. */
export function slotsOf(offer: Offer, date: string, from = '06:00', to = '18:00'): Slot[] {
  const slots: Slot[] = [];
  let at = DateTime.fromFormat(`${date} ${from}`, 'yyyy-MM-dd HH:mm', { zone: ZONE });
  const end = DateTime.fromFormat(`${date} ${to}`, 'yyyy-MM-dd HH:mm', { zone: ZONE });
  while (at.plus({ minutes: offer.duration }) <= end) {
    slots.push({ date, startTime: at.toFormat('HH:mm'), endTime: at.plus({ minutes: offer.duration }).toFormat('HH:mm') });
    at = at.plus({ minutes: offer.duration });
  }
  return slots;
}

/** The body of `POST /consultations/bookings` for one participant, at the offer's price. */
export function bookingBody(offer: Offer, slot: Slot, email: string) {
  return {
    SellerId: offer.sellerId,
    consultationId: offer.id,
    ruleSetId: offer.ruleSetId,
    date: slot.date,
    startTime: slot.startTime,
    endTime: slot.endTime,
    participants: [{ fullName: 'A buyer', email, phone: '+251911223344' }],
    subTotal: offer.priceMajor,
    totalAmount: offer.priceMajor,
    currency: 'ETB',
  };
}

export function book(system: System, buyer: Session, offer: Offer, slot: Slot): Promise<JsonResponse> {
  return apiOf(system, buyer)('POST', '/consultations/bookings', bookingBody(offer, slot, buyer.email));
}

/** A buyer registered, once their wallet exists (the wallet makes it from the registration event), topped up. */
export async function fundedBuyer(system: System, amountMajor: number): Promise<Session> {
  const buyer = await register(system, 'buyer');
  await waitFor(
    'buyer wallet',
    () => apiOf(system, buyer)('GET', '/v1/wallet'),
    (res) => res.status === 200,
  );
  await topUp(system, buyer, amountMajor);
  return buyer;
}

/** A top-up paid through the sandbox hosted checkout; resolves with its reference. */
export async function topUp(system: System, user: Session, amountMajor: number): Promise<string> {
  const created = await apiOf(system, user)('POST', `/wallets/users/${user.ref}/topup`, {
    amount: amountMajor,
    paymentMethod: 'Chapa',
    redirectUrl: 'http://localhost:3000/done',
  });
  if (created.status !== 200) throw new Error(`top-up: ${created.status} ${JSON.stringify(created.body)}`);
  const link = new URL(created.body.data.paymentUrl);
  const paid = await fetch(`${system.gateway}${link.pathname}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: link.searchParams.get('token')! }).toString(),
  });
  if (paid.status !== 303 || !paid.headers.get('location')?.includes('status=Completed'))
    throw new Error(`checkout pay: ${paid.status} ${paid.headers.get('location')}`);
  return created.body.data.referenceId ?? link.pathname.split('/').pop()!;
}

/** Money for paid bookings: one top-up each. */
export async function fund(system: System, users: Session[], amountMajor: number): Promise<void> {
  await Promise.all(users.map((user) => topUp(system, user, amountMajor)));
}

export interface AuditedEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/**
 * A queue of the test's own, bound to the system's exchange: every event published, with how
 * often it arrived (the bus is at least once, so a repeat is allowed here; consumers dedupe).
 */
export async function auditEvents(system: System, options: { keys?: string[]; queue?: string } = {}) {
  const keys = options.keys ?? ['#'];
  const connection = await connectAmqp(system.amqpUrl);
  const channel = await connection.createChannel();
  const exchange = `${system.namespace}.marketplace.events`;
  const queue = options.queue ?? `${system.namespace}.test-audit.${Math.random().toString(36).slice(2, 8)}`;
  await channel.assertExchange(exchange, 'topic', { durable: true });
  await channel.assertQueue(queue, { durable: true });
  for (const key of keys) await channel.bindQueue(queue, exchange, key);
  const seen = new Map<string, AuditedEvent & { deliveries: number }>();
  await channel.consume(queue, (msg) => {
    if (!msg) return;
    let event: AuditedEvent;
    try {
      event = JSON.parse(msg.content.toString()) as AuditedEvent;
    } catch {
      // A poison message a test published on purpose: not an event to audit.
      channel.ack(msg);
      return;
    }
    const known = seen.get(event.id);
    if (known) known.deliveries += 1;
    else seen.set(event.id, { ...event, deliveries: 1 });
    channel.ack(msg);
  });
  return {
    /** Distinct events by type. */
    ofType: (type: string) => [...seen.values()].filter((event) => event.type === type),
    all: () => [...seen.values()],
    /** Deliveries beyond the first of each event (broker-level repeats). */
    repeats: () => [...seen.values()].reduce((sum, event) => sum + event.deliveries - 1, 0),
    /** Publishes raw bytes to the system's exchange (a duplicate, a poison message). */
    publish: (routingKey: string, content: Buffer, messageId?: string) =>
      new Promise<void>((resolve, reject) => {
        void (async () => {
          const confirm = await connection.createConfirmChannel();
          confirm.publish(exchange, routingKey, content, { persistent: true, messageId, contentType: 'application/json' }, (err) =>
            err ? reject(err) : resolve(),
          );
          await confirm.waitForConfirms();
          await confirm.close();
        })().catch(reject);
      }),
    queue,
    /** Messages waiting in the audit queue and its consumers (a diagnosis of a missing event). */
    depth: async () => {
      const probe = await connection.createChannel();
      const { messageCount, consumerCount } = await probe.checkQueue(queue);
      await probe.close();
      return { messageCount, consumerCount };
    },
    /** Closes the connection; the queue stays (and keeps collecting) unless `remove`. */
    /** Publishes events in one go (confirms awaited together), as a busy producer would. */
    publishAll: async (events: Array<{ id: string; type: string }>) => {
      const confirm = await connection.createConfirmChannel();
      for (const event of events)
        confirm.publish(exchange, event.type, Buffer.from(JSON.stringify(event)), {
          persistent: true,
          messageId: event.id,
          contentType: 'application/json',
        });
      await confirm.waitForConfirms();
      await confirm.close();
    },
    close: async (remove = true) => {
      if (remove) await channel.deleteQueue(queue).catch(() => undefined);
      await connection.close().catch(() => undefined);
    },
  };
}

/** A counter of a process's Prometheus `/metrics`, summed over the series whose labels match. */
export async function metric(url: string, name: string, labels: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${url}/metrics`).catch(() => null);
  if (!res || res.status !== 200) return NaN;
  const text = await res.text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([key, value]) => line.includes(`${key}="${value}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/**
 * Waits for a condition with a deadline; throws with `what` when it does not come. A probe that
 * fails (a service restarting) is asked again, and the last answer it gave is kept.
 */
export async function waitFor<T>(what: string, probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  let last: T | undefined;
  const answer = async () => (last = await probe().catch(() => last));
  return (await waitUntil(answer, { what, timeoutMs, intervalMs: 100, until: (value) => value !== undefined && done(value) })) as T;
}

/** Runs `tasks` with at most `concurrency` at once; results in order. */
export async function pool<T>(concurrency: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, tasks.length) }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}

/** The numbers a fault test checked, one line in the test output (and the CI log). */
export function report(test: string, numbers: Record<string, number | string>): void {
  const line = Object.entries(numbers)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  process.stdout.write(`[reliability] ${test}: ${line}\n`);
}

interface Collection {
  find: (filter?: object) => { toArray: () => Promise<Array<Record<string, unknown>>> };
  countDocuments: (filter?: object) => Promise<number>;
}

/**
 * Read-only access to a service's database for the invariants no API shows (ledger entries,
 * slot places). The e2e package has no MongoDB driver of its own: it borrows kit's mongoose.
 */
export async function openDatabase(url: string, dbName: string) {
  const mongoose = createRequire(join(__dirname, '..', '..', 'packages', 'kit', 'package.json'))('mongoose');
  const connection = await mongoose.createConnection(url, { dbName, serverSelectionTimeoutMS: 5_000 }).asPromise();
  return {
    collection: (name: string) => connection.db.collection(name) as Collection,
    close: () => connection.close() as Promise<void>,
  };
}

export interface WalletCheck {
  wallets: number;
  /** Wallets whose ledger does not sum to the balance (read with its ops in flight, see checkWallets). */
  mismatched: Array<{ walletId: string; availableMinor: number; ledgerAvailable: number; heldMinor: number; ledgerHeld: number }>;
  availableMinor: number;
  heldMinor: number;
  completedTopUpsMinor: number;
  settledPayoutsMinor: number;
  transfersByStatus: Record<string, number>;
}

/** The wallet database's invariants: every balance is its ledger's sum; money comes only from top-ups. */
export async function checkWallets(system: System): Promise<WalletCheck> {
  const db = await openDatabase(system.mongoUrl, system.dbName('wallet'));
  try {
    const wallets = await db.collection('wallets').find().toArray();
    const entries = await db.collection('ledger_entries').find().toArray();
    const sums = new Map<string, { available: number; held: number }>();
    const add = (entry: Record<string, unknown>) => {
      const sum = sums.get(entry.walletId as string) ?? { available: 0, held: 0 };
      sum.available += entry.availableDeltaMinor as number;
      sum.held += entry.heldDeltaMinor as number;
      sums.set(entry.walletId as string, sum);
    };
    const moved = new Map(entries.map((entry) => [entry._id as string, entry]));
    for (const entry of entries) add(entry);
    for (const wallet of wallets)
      for (const entry of (wallet.pendingEntries as Array<Record<string, unknown>>) ?? []) if (!moved.has(entry.id as string)) add(entry);
    // An op in flight (its run cut off): the balance has what it took and not what it adds yet.
    // Decided (its entry carries its token): the ledger counts it whole, so the balance is read
    // with what it adds; else the ledger does not count it, so the balance is read with what it took given back.
    const inFlightView = (wallet: Record<string, unknown>, field: 'availableDeltaMinor' | 'heldDeltaMinor') =>
      ((wallet.inflight as Array<Record<string, unknown>> | undefined) ?? []).reduce((sum, op) => {
        const delta = op[field] as number;
        const decided = moved.get(op.id as string)?.token === op.token;
        return sum + (decided ? Math.max(delta, 0) : Math.max(-delta, 0));
      }, 0);
    const rows = wallets.map((wallet) => ({
      walletId: wallet._id as string,
      availableMinor: (wallet.availableMinor as number) + inFlightView(wallet, 'availableDeltaMinor'),
      heldMinor: (wallet.heldMinor as number) + inFlightView(wallet, 'heldDeltaMinor'),
      ledgerAvailable: sums.get(wallet._id as string)?.available ?? 0,
      ledgerHeld: sums.get(wallet._id as string)?.held ?? 0,
    }));
    const mismatched = rows.filter((row) => row.availableMinor !== row.ledgerAvailable || row.heldMinor !== row.ledgerHeld);
    const topUps = await db.collection('topups').find({ status: 'Completed' }).toArray();
    const payouts = await db.collection('payouts').find({ status: 'Completed' }).toArray();
    const transfers = await db.collection('transfers').find().toArray();
    const transfersByStatus: Record<string, number> = {};
    for (const transfer of transfers)
      transfersByStatus[transfer.status as string] = (transfersByStatus[transfer.status as string] ?? 0) + 1;
    return {
      wallets: wallets.length,
      mismatched,
      availableMinor: rows.reduce((sum, row) => sum + row.availableMinor, 0),
      heldMinor: rows.reduce((sum, row) => sum + row.heldMinor, 0),
      completedTopUpsMinor: topUps.reduce((sum, completed) => sum + (completed.amountMinor as number), 0),
      settledPayoutsMinor: payouts.reduce((sum, payout) => sum + (payout.amountMinor as number), 0),
      transfersByStatus,
    };
  } finally {
    await db.close();
  }
}

/**
 * Slots that start soon: a session may be started from 15 minutes before its slot, and a slot
 * can be booked only before it starts. Those starting 90 s to 14 min from now, of a consultation
 * open all day (`from: '00:00:00'`).
 */
export function nearSlots(offer: Offer): Slot[] {
  const now = DateTime.now().setZone(offer.timezone);
  const slots: Slot[] = [];
  let at = now.startOf('day');
  // A slot of the day only: one that would end past midnight is not a slot of an interval ending
  // 23:59:59 (an offer for near slots is best made in `zoneAwayFromMidnight()`).
  while (at < now.plus({ minutes: 14 }) && at.plus({ minutes: offer.duration }) <= now.endOf('day')) {
    if (at > now.plus({ seconds: 90 }))
      slots.push({
        date: at.toFormat('yyyy-MM-dd'),
        startTime: at.toFormat('HH:mm'),
        endTime: at.plus({ minutes: offer.duration }).toFormat('HH:mm'),
      });
    at = at.plus({ minutes: offer.duration });
  }
  return slots;
}

/**
 * A consultation open all day with 5-minute slots, in a zone away from midnight: `nearSlots` of
 * it can be booked now and started at once (a session starts from 15 minutes before its slot).
 */
export function offerNearConsultation(system: System, seller: Session, admin: Session): Promise<Offer> {
  return offerConsultation(system, seller, admin, { duration: 5, from: '00:00:00', to: '23:59:59', timezone: zoneAwayFromMidnight() });
}

/** Zones a soon slot may be in: the first where it is far from midnight (the slot must fit its day). */
const SOON_ZONES = ['Africa/Addis_Ababa', 'America/New_York', 'Asia/Tokyo', 'Pacific/Honolulu'];

/**
 * The first of SOON_ZONES whose hour now is within [earliest, latest]: slots of the next minutes
 * there do not cross midnight, whatever the time of day the tests run at.
 */
export function zoneAwayFromMidnight(earliest = 1, latest = 22): string {
  return SOON_ZONES.find((zone) => {
    const hour = DateTime.now().setZone(zone).hour;
    return hour >= earliest && hour <= latest;
  })!;
}

export interface SoonSlot {
  offer: Offer;
  slot: Slot;
  startsAt: Date;
}

/**
 * A consultation whose one slot starts at the first whole minute at least `leadSeconds` from now
 * (rule-set intervals are wall-clock `HH:MM:SS`, slots are cut on whole minutes): it can be
 * booked at once, started at once (a session starts from 15 minutes before its slot), and ended
 * once it has begun (`waitForSlotStart`) — a session is never ended before its slot starts.
 */
export async function offerSoonSlot(
  system: System,
  seller: Session,
  admin: Session,
  options: { priceMajor?: number; capacity?: number; leadSeconds?: number; allDay?: boolean } = {},
): Promise<SoonSlot> {
  const duration = 5;
  // All day: the soon slot is cut from an interval of its own, and the day's other slots keep
  // their grid from midnight (`slotsOf`) up to it, so it must come after the morning's (09:00).
  const [earliest, latest] = options.allDay ? [9, 21] : [1, 22];
  const timezone = zoneAwayFromMidnight(earliest, latest);
  const start = DateTime.now()
    .setZone(timezone)
    .plus({ seconds: options.leadSeconds ?? 10, minutes: 1 })
    .startOf('minute');
  const end = start.plus({ minutes: duration });
  const soon = start.toFormat('HH:mm:ss');
  const offer = await offerConsultation(system, seller, admin, {
    priceMajor: options.priceMajor,
    capacity: options.capacity,
    duration,
    timezone,
    intervals: options.allDay
      ? [
          ['00:00:00', soon],
          [soon, '23:59:59'],
        ]
      : [[soon, end.toFormat('HH:mm:ss')]],
  });
  return {
    offer,
    slot: { date: start.toFormat('yyyy-MM-dd'), startTime: start.toFormat('HH:mm'), endTime: end.toFormat('HH:mm') },
    startsAt: start.toJSDate(),
  };
}

/** Sleeps until a slot has begun (and a little more, for clocks). */
export async function waitForSlotStart(startsAt: Date): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startsAt.getTime() - Date.now() + 500)));
}

/** The seller starts a session, waits for its slot to begin and ends it (reviews open). */
export async function runSession(system: System, seller: Session, sessionId: string, startsAt: Date): Promise<void> {
  const sellerApi = apiOf(system, seller);
  expect((await sellerApi('POST', `/consultations/sessions/${sessionId}/start`, {})).status).toBe(200);
  await waitForSlotStart(startsAt);
  expect((await sellerApi('POST', `/consultations/sessions/${sessionId}/end`, {})).status).toBe(200);
}

/** A buyer reviews a consultation once the review service says they may (200 expected). */
export async function reviewWhenEligible(system: System, buyer: Session, consultationId: string, rating: number): Promise<void> {
  await eventually(
    async () => (await apiOf(system, buyer)('GET', `/reviews/consultation/${consultationId}/status`)).body.data?.canReview,
    (canReview) => canReview === true,
    15_000,
  );
  const res = await apiOf(system, buyer)('POST', '/reviews', { entityType: 'consultation_service', entityId: consultationId, rating });
  expect(res.status).toBe(200);
}
