import amqp from 'amqplib';
import mongoose from 'mongoose';
import pino from 'pino';
import { DateTime } from 'luxon';
import { EVENTS_EXCHANGE, newReference, newUuid } from '@mkt/contracts';
import { startComponent, stopRuntime, type Bus, type StartedRuntime } from '@mkt/kit';
import { call, makeKeyPair, signTestToken, testServers, uniqueName, type TestUser } from '@mkt/infra';
import type { ConsultationParts } from '../src/app';
import { consultationService } from '../src/composition';
import { loadConfig } from '../src/config';

const keys = makeKeyPair();
export const log = pino({ level: 'silent' });
export const ZONE = 'Africa/Addis_Ababa';

export interface ConsultationApp {
  url: string;
  bus: Bus;
  parts: ConsultationParts;
}

/** The consultation app for one test file, as main.ts builds it, against the real servers. */
export function useConsultationApp(): () => ConsultationApp {
  let app: ConsultationApp;
  let started: StartedRuntime;
  beforeAll(async () => {
    const { mongoUrl, amqpUrl } = testServers();
    const config = loadConfig({ MONGO_URL: mongoUrl, AMQP_URL: amqpUrl, JWT_PUBLIC_KEY: keys.publicKey, PORT: '0' });
    const service = consultationService(config, log);
    started = await startComponent(service.options, uniqueName('consultation'));
    app = { url: started.url, bus: started.runtime.bus, parts: service.parts() };
  });
  afterAll(async () => {
    await stopRuntime(started);
    await mongoose.disconnect();
  });
  return () => app;
}

export function newUser(role: TestUser['role'] = 'buyer'): TestUser {
  return { id: newUuid(), ref: newReference('USR'), role, name: `${role} ${uniqueName('n')}` };
}
export const tokenOf = (user: TestUser) => signTestToken(keys.privateKey, user);
export const admin = newUser('admin');

export function as(app: () => ConsultationApp, user: TestUser | undefined) {
  return (method: string, path: string, body?: object) => call(app().url, method, path, { token: user && tokenOf(user), body });
}

export const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/** A local date some days ahead in the Addis Ababa zone. */
export function daysAhead(days: number): string {
  return DateTime.now().setZone(ZONE).plus({ days }).toFormat('yyyy-MM-dd');
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
  app: () => ConsultationApp,
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
  if (options.approve !== false) await as(app, admin)('POST', `/consultations/${created.body.data.id}/approve`);
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

/** Collects the events of some routing keys published from now on. */
export async function listenFor(routingKeys: string[]) {
  const connection = await amqp.connect(testServers().amqpUrl);
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  for (const key of routingKeys) await channel.bindQueue(queue, EVENTS_EXCHANGE, key);
  const seen: Array<{ id: string; type: string; data: Record<string, unknown> }> = [];
  await channel.consume(queue, (msg) => msg && seen.push(JSON.parse(msg.content.toString())), { noAck: true });
  return {
    seen,
    async waitFor(predicate: (event: (typeof seen)[number]) => boolean, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const found = seen.find(predicate);
        if (found) return found;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('event not seen');
    },
    close: () => connection.close(),
  };
}
