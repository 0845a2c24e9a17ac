import mongoose from 'mongoose';
import pino from 'pino';
import { makeEvent, newReference, newUuid, type EventData, type EventType } from '@mkt/contracts';
import { Bus, connectMongo, ensureIndexes } from '@mkt/kit';
import { call, listenOnFreePort, makeKeyPair, signTestToken, testServers, uniqueName, type TestUser } from '@mkt/infra';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { BookingFact, KnownUser, Relationship } from '../src/db/crm.models';

const keys = makeKeyPair();
export const log = pino({ level: 'silent' });

export function useCrm(): () => { url: string; bus: Bus } {
  let state: { url: string; bus: Bus };
  let close: () => Promise<void>;
  beforeAll(async () => {
    const { mongoUrl, amqpUrl } = testServers();
    await connectMongo({ url: mongoUrl, dbName: uniqueName('crm'), log });
    await ensureIndexes([KnownUser, Relationship, BookingFact]);
    const bus = new Bus({ url: amqpUrl, log });
    await bus.start();
    const config = loadConfig({ MONGO_URL: mongoUrl, AMQP_URL: amqpUrl, JWT_PUBLIC_KEY: keys.publicKey });
    const server = await listenOnFreePort(createApp({ config, runtime: { log, readiness: [] } }));
    state = { url: server.url, bus };
    close = async () => {
      await server.close();
      await bus.close();
    };
  });
  afterAll(async () => {
    await close();
    await mongoose.disconnect();
  });
  return () => state;
}

export function newUser(role: TestUser['role'] = 'buyer'): TestUser {
  return { id: newUuid(), ref: newReference('USR'), role };
}
export const tokenOf = (user: TestUser) => signTestToken(keys.privateKey, user);
export const as = (crm: () => { url: string }, user: TestUser | undefined) => (method: string, path: string, body?: object) =>
  call(crm().url, method, path, { token: user && tokenOf(user), body });

export function event<T extends EventType>(type: T, data: EventData<T>, occurredAt?: string) {
  const made = makeEvent(type, data, { source: 'test' });
  return occurredAt ? { ...made, occurredAt } : made;
}

export const confirmed = (sellerId: string, buyerId: string, totalAmountMinor: number, bookingId = uniqueName('bk'), occurredAt?: string) =>
  event(
    'consultation.booking.confirmed',
    {
      bookingId,
      consultationId: 'con_x',
      sellerId,
      buyerId,
      totalAmountMinor,
      currency: 'ETB',
      date: '2030-01-01',
      startTime: '10:00',
      consultationCategory: 'Career',
    },
    occurredAt,
  );

export const cancelled = (sellerId: string, buyerId: string, bookingId: string, refundAmountMinor: number) =>
  event('consultation.booking.cancelled', { bookingId, sellerId, buyerId, refundAmountMinor });

export const registered = (user: TestUser, fullName: string) =>
  event('identity.user.registered', { userId: user.id, referenceId: user.ref, role: user.role, fullName, email: `${user.id}@x.test` });
