import mongoose from 'mongoose';
import pino from 'pino';
import { DateTime } from 'luxon';
import { openDatabase } from '@mkt/kit/db';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import type { Bus } from '@mkt/kit/bus';
import { listenForEvents, testEnv, testIdentity, testServers, uniqueName, waitFor, type TestUser } from '@mkt/infra';
import { consultationService, type ConsultationParts } from '../src/composition';
import { loadConfig } from '../src/config';
// The real wallet, in this process, for paid bookings (its own collections; consultation's code
// only ever reaches it over HTTP).
import { walletService, type WalletParts } from '../../wallet/src/composition';
import { loadConfig as loadWalletConfig } from '../../wallet/src/config';

const identity = testIdentity();
/**
 * This file's database and broker namespace: every service a file starts (the consultation
 * service, the wallet it pays through) shares them, and no other file sees their events.
 */
export const env = testEnv('consultation');
export const log = pino({ level: 'silent' });
export const ZONE = 'Africa/Addis_Ababa';

export const INTERNAL_TOKEN = 'consultation-tests-internal-token-0123456789';

export interface WalletSide {
  url: string;
  bus: Bus;
  parts: WalletParts;
  started: StartedRuntime;
}

export interface ConsultationApp {
  url: string;
  bus: Bus;
  parts: ConsultationParts;
  started: StartedRuntime;
  wallet: WalletSide;
}

const walletConfig = (amqpUrl = testServers().amqpUrl, overrides: Record<string, string> = {}) =>
  loadWalletConfig({
    MONGO_URL: testServers().mongoUrl,
    AMQP_URL: amqpUrl,
    JWT_PUBLIC_KEY: identity.keys.publicKey,
    PORT: '0',
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    BUS_NAMESPACE: env.namespace,
    ...overrides,
  });

/**
 * The wallet's database in this file: its own, as in every deployment. One database shared by
 * both would hold one `migrations` record per name, so the second service's `0001-indexes` would
 * count as run and its unique keys would never be built.
 */
const walletDbName = () => `${env.dbName}_wallet`;

/** The wallet started last in this file (its composition's parts, on its own connection). */
let walletParts: WalletParts | undefined;

/** The wallet as its main.ts builds it (consumers and sweeps left to the test). */
export async function startWalletSide(amqpUrl = testServers().amqpUrl, overrides: Record<string, string> = {}): Promise<WalletSide> {
  const service = walletService(walletConfig(amqpUrl, overrides), log);
  const started = await startComponent(service.definition, walletDbName());
  walletParts = service.parts;
  return { url: started.url, bus: started.runtime.bus, parts: service.parts, started };
}

/** The parts of the wallet this file started last (its models on its own connection). */
export function walletSide(): WalletParts {
  if (!walletParts) throw new Error('No wallet started in this file yet');
  return walletParts;
}
export const walletModels = () => walletSide().models;

let walletDatabase: Promise<WalletParts> | undefined;

/**
 * The wallet's parts to seed balances with: the wallet this file started, or — in a file that
 * started none — a wallet composition whose database (the file's) is opened here, not started.
 */
function seedingWallet(): Promise<WalletParts> {
  if (walletParts) return Promise.resolve(walletParts);
  return (walletDatabase ??= (async () => {
    const { definition, parts } = walletService(walletConfig(), log);
    await openDatabase(definition.runtime.db, { url: testServers().mongoUrl, dbName: walletDbName(), log });
    return parts;
  })());
}

/** A consultation service talking to `walletUrl` (its consumers and sweeps left to the test). */
export async function startConsultation(walletUrl: string, amqpUrl = testServers().amqpUrl, overrides: Record<string, string> = {}) {
  const config = loadConfig({
    MONGO_URL: testServers().mongoUrl,
    AMQP_URL: amqpUrl,
    JWT_PUBLIC_KEY: identity.keys.publicKey,
    PORT: '0',
    BUS_NAMESPACE: env.namespace,
    WALLET_URL: walletUrl,
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    // A loaded test machine must not turn a slow answer into PaymentPending (tests that want
    // the timeout set their own).
    WALLET_TIMEOUT_MS: '20000',
    ...overrides,
  });
  const service = consultationService(config, log);
  const started = await startComponent(service.definition, env.dbName);
  current = service.parts;
  return { url: started.url, bus: started.runtime.bus, parts: service.parts, started };
}

let current: ConsultationParts | undefined;
/** The models of the consultation service this file started last (its composition's, on its database). */
export function models(): ConsultationParts['models'] {
  if (!current) throw new Error('No consultation service started in this file yet');
  return current.models;
}

/** The consultation app (and the wallet it pays through) for one test file, against the real servers. */
export function useConsultationApp(): () => ConsultationApp {
  let app: ConsultationApp;
  beforeAll(async () => {
    const wallet = await startWalletSide();
    app = { ...(await startConsultation(wallet.url)), wallet };
  });
  afterAll(async () => {
    await stopRuntime(app.started);
    await stopRuntime(app.wallet.started);
    await mongoose.disconnect();
  });
  return () => app;
}

/** What a buyer has in their wallet before their first request (every user's wallet is opened then). */
const openingBalance = new Map<string, number>();
const opened = new Map<string, Promise<void>>();
export const DEFAULT_BUYER_BALANCE_MINOR = 1_000_000_00;

/** A user; a buyer comes with DEFAULT_BUYER_BALANCE_MINOR in their wallet unless told otherwise. */
export function newUser(role: TestUser['role'] = 'buyer', options: { balanceMinor?: number } = {}): TestUser {
  const user = identity.newUser(role, { name: `${role} ${uniqueName('n')}` });
  openingBalance.set(user.id, options.balanceMinor ?? (role === 'buyer' ? DEFAULT_BUYER_BALANCE_MINOR : 0));
  return user;
}
export const tokenOf = (user: TestUser) => identity.tokenOf(user);

/** The user's coupon-check counters, one per minute they checked in (`_id` = `user|minute`). */
export const couponChecksOf = (userId: string) =>
  models()
    .CouponCheck.find({ _id: { $regex: `^${userId}\\|` } })
    .lean();
export const admin = newUser('admin');

/** Opens the user's wallet with its opening balance, once (as registration and a top-up would). */
export function ensureWallet(user: TestUser): Promise<void> {
  let done = opened.get(user.id);
  if (!done) {
    done = (async () => {
      const seeding = await seedingWallet();
      const wallet = await seeding.walletRepository.open(user.id, user.ref, 'MKT');
      const minor = openingBalance.get(user.id) ?? 0;
      if (minor > 0)
        await seeding.steps.applyOp(wallet._id, {
          opId: `seed:${user.id}`,
          type: 'topup_credit',
          availableDeltaMinor: minor,
          heldDeltaMinor: 0,
          reference: 'seed',
        });
    })();
    opened.set(user.id, done);
  }
  return done;
}

export function as(app: () => { url: string }, user: TestUser | undefined) {
  return async (method: string, path: string, body?: object) => {
    if (user) await ensureWallet(user);
    return identity.as(() => app().url, user)(method, path, body);
  };
}

export const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** A local date some days ahead in the Addis Ababa zone. */
export function daysAhead(days: number): string {
  return DateTime.now().setZone(ZONE).plus({ days }).toFormat('yyyy-MM-dd');
}

/**
 * An admin approves a consultation as they should: reads its detail, then approves the `version`
 * they read (a Pending consultation needs it).
 */
export async function approveAsRead(app: () => { url: string }, key: string, caller: TestUser = admin) {
  const read = await as(app, caller)('GET', `/consultations/${key}`);
  return as(app, caller)('POST', `/consultations/${key}/approve`, { version: read.body.data?.version });
}

export interface Offer {
  seller: TestUser;
  consultationId: string;
  referenceId: string;
  ruleSetId: string;
  pricingId: string;
}

/** A seller with a rule set (every day 09:00–17:00), a price and an approved consultation. */
export async function givenOffer(
  app: () => { url: string },
  options: { capacity?: number; basePrice?: number; maxBookingsPerDay?: number; bufferTime?: number; approve?: boolean } = {},
): Promise<Offer> {
  const seller = newUser('seller');
  const sellerCall = as(app, seller);
  const ruleSet = await sellerCall('POST', '/consultations/availability-rule-sets/rule-sets', {
    name: 'Weekdays',
    timezone: ZONE,
    metaData: { autoAccept: true, bufferTime: options.bufferTime ?? 0, maxBookingsPerDay: options.maxBookingsPerDay ?? 50 },
    availabilityRules: weekdays.map((weekday) => ({
      type: 'weekly',
      weekday,
      intervals: [{ start_time: '09:00:00', end_time: '17:00:00', enabled: true }],
    })),
  });
  const pricing = await sellerCall('POST', '/consultations/pricing', {
    basePrice: options.basePrice ?? 500,
    currency: 'ETB',
    pricingStrategy: 'Fixed',
    isOnSale: false,
    isActive: true,
  });
  const capacity = options.capacity ?? 1;
  const created = await sellerCall('POST', '/consultations', {
    title: 'Career coaching',
    description: 'One hour',
    duration: 60,
    sessionType: capacity === 1 ? 'OneToOne' : 'Group',
    maxCapacity: capacity,
    deliveryMode: 'Online',
    timezone: ZONE,
    language: 'Amharic',
    category: 'Career',
    subcategory: ['CV'],
    tags: ['coaching'],
    ruleSetId: ruleSet.body.data.referenceId,
    pricingId: pricing.body.data.referenceId,
  });
  if (options.approve !== false) await approveAsRead(app, created.body.data.id);
  return {
    seller,
    consultationId: created.body.data.id,
    referenceId: created.body.data.referenceId,
    ruleSetId: ruleSet.body.data.id,
    pricingId: pricing.body.data.id,
  };
}

export function bookingBody(offer: Offer, overrides: object = {}) {
  return {
    SellerId: offer.seller.id,
    consultationId: offer.consultationId,
    ruleSetId: offer.ruleSetId,
    date: daysAhead(7),
    startTime: '10:00',
    endTime: '11:00',
    participants: [{ fullName: 'Sara Tesfaye', email: 'sara@example.com', phone: '+251911223344' }],
    subTotal: 500,
    totalAmount: 500,
    currency: 'ETB',
    notes: 'First session',
    ...overrides,
  };
}

/** Collects the events of some routing keys this file's services publish from now on. */
export async function listenFor(routingKeys: string[]) {
  const listener = await listenForEvents(testServers().amqpUrl, env.events, routingKeys);
  type Seen = { id: string; type: string; data: Record<string, unknown> };
  return {
    get seen(): Seen[] {
      return listener.seen.map((message) => message.json);
    },
    async waitFor(predicate: (event: Seen) => boolean, timeoutMs?: number): Promise<Seen> {
      return (await listener.waitFor((message) => predicate(message.json), `an event of ${routingKeys.join(', ')}`, timeoutMs)).json;
    },
    /**
     * Returns once no event seen so far is left in an outbox (nothing of them is still to be
     * published) and every event published before has arrived: what is seen then is all there is.
     */
    async settle(): Promise<void> {
      const ids = listener.seen.map((message) => message.json.id as string);
      const pending = { 'pendingEvents.id': { $in: ids } };
      const inOutbox = async () =>
        (await models().Booking.exists(pending)) ||
        (await models().Session.exists(pending)) ||
        (await models().Consultation.exists(pending));
      await waitFor(async () => !(await inOutbox()), {
        what: 'the outboxes to let go of the events seen',
      });
      await listener.settle();
    },
    close: () => listener.close(),
  };
}
