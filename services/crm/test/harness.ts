import mongoose from 'mongoose';
import pino from 'pino';
import { eventOwner, makeEvent, type EventData, type EventType } from '@mkt/contracts';
import { startComponent, stopRuntime, type StartedRuntime } from '@mkt/kit/runtime';
import type { Bus } from '@mkt/kit/bus';
import { testEnv, testIdentity, uniqueName, type TestUser } from '@mkt/infra';
import { crmService, type CrmParts } from '../src/composition';
import { loadConfig } from '../src/config';

const identity = testIdentity();
/** This file's database and broker namespace. */
export const env = testEnv('crm');
export const log = pino({ level: 'silent' });

/**
 * The CRM as main.ts composes it, for one test file, against the real servers: `parts` (its
 * models, consumers, projection) at once, the server from `beforeAll`.
 */
export function useCrm(): (() => { url: string; bus: Bus }) & { parts: CrmParts } {
  let started: StartedRuntime;
  const service = crmService(loadConfig(env.serviceEnv(identity.keys.publicKey)), log);
  beforeAll(async () => {
    started = await startComponent(service.definition, env.dbName);
  });
  afterAll(async () => {
    await stopRuntime(started);
    await mongoose.disconnect();
  });
  return Object.assign(() => ({ url: started.url, bus: started.runtime.bus }), { parts: service.parts });
}

export const newUser = (role: TestUser['role'] = 'buyer'): TestUser => identity.newUser(role);
export const tokenOf = (user: TestUser) => identity.tokenOf(user);
export const as = (crm: () => { url: string }, user: TestUser | undefined) => identity.as(() => crm().url, user);

export function event<T extends EventType>(type: T, data: EventData<T>, occurredAt?: string) {
  const made = makeEvent(type, data, { source: eventOwner(type)! });
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
