import type { BookingDoc } from '../src/domain/records';
import mongoose from 'mongoose';
import { testServers, waitFor, type TestUser } from '@mkt/infra';
import { stopRuntime } from '@mkt/kit/runtime';
import { walletPaymentsConsumer } from '../src/events/payments.consumer';
import { bookingEventsConsumer } from '../../wallet/src/events/bookings.consumer';
import { as, startConsultation, startWalletSide, walletModels, walletSide, type ConsultationApp, models } from './harness';

/**
 * A consultation service and the wallet it pays through, on the file's exchange and queues
 * (BUS_NAMESPACE), with the consumers that carry a paid booking's money: the wallet's
 * (capture, refund) and the consultation's (refund completed). Sweeps are run by the tests.
 */
export async function startPaidPair(
  amqpUrl = testServers().amqpUrl,
  consultationEnv: Record<string, string> = {},
): Promise<ConsultationApp> {
  const wallet = await startWalletSide(amqpUrl);
  const consultation = await startConsultation(wallet.url, amqpUrl, consultationEnv);
  await wallet.bus.consume({ ...bookingEventsConsumer(wallet.parts.holds), retryDelaysMs: [200, 1_000] });
  await consultation.bus.consume({ ...walletPaymentsConsumer(consultation.parts.bookings), retryDelaysMs: [200, 1_000] });
  return { ...consultation, wallet };
}

export async function stopPaidPair(app: ConsultationApp): Promise<void> {
  await stopRuntime(app.started);
  await stopRuntime(app.wallet.started);
}

/** A paid pair for a test file: started before its tests, stopped (and the database let go) after. */
export function usePaidPair(): () => ConsultationApp {
  let pair: ConsultationApp;
  beforeAll(async () => {
    pair = await startPaidPair();
  });
  afterAll(async () => {
    await stopPaidPair(pair);
    await mongoose.disconnect();
  });
  return () => pair;
}

export function eventually<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  return waitFor(probe, { what: 'the condition', until: done, timeoutMs });
}

export async function balanceOf(user: Pick<TestUser, 'id'>): Promise<{ available: number; held: number }> {
  const wallet = await walletModels().Wallet.findOne({ userId: user.id }).lean();
  return { available: wallet?.availableMinor ?? 0, held: wallet?.heldMinor ?? 0 };
}

/** Moves a wallet's pending ledger entries, then checks that they sum to its balances. */
export async function ledgerMatches(user: Pick<TestUser, 'id'>): Promise<boolean> {
  const { Wallet, LedgerEntry } = walletModels();
  const wallet = await Wallet.findOne({ userId: user.id }).lean();
  if (!wallet) return false;
  await walletSide().ledger.flush(wallet._id);
  const entries = await LedgerEntry.find({ walletId: wallet._id }).lean();
  const fresh = await Wallet.findById(wallet._id).lean();
  return (
    entries.reduce((sum, e) => sum + e.availableDeltaMinor, 0) === fresh!.availableMinor &&
    entries.reduce((sum, e) => sum + e.heldDeltaMinor, 0) === fresh!.heldMinor
  );
}

export const holdOf = (bookingId: string) => walletModels().BookingHold.findById(bookingId).lean();
export const bookingOf = (bookingId: string) => models().Booking.findById(bookingId).lean<BookingDoc>();

/**
 * A session's slot (`lengthMs` long) moved to end just before now, as time would, and with it
 * its holds' `endsAt`.
 */
export async function passSlotOf(sessionId: string, lengthMs = 59_000): Promise<void> {
  const endsAt = new Date(Date.now() - 1_000);
  const startsAt = new Date(endsAt.getTime() - lengthMs);
  await models().Session.updateOne({ _id: sessionId }, { $set: { startsAt, endsAt } });
  const bookingIds = (await models().Booking.find({ sessionId }, { _id: 1 }).lean()).map((booking) => booking._id);
  await walletModels().BookingHold.updateMany({ _id: { $in: bookingIds } }, { $set: { endsAt } });
}

/**
 * Starts and ends a booking's session as its seller. Its slot is moved to just before now
 * first, as time would (bookings are always in the future): a session is started from 15
 * minutes before its slot and ended once it has begun, and the wallet captures a hold once its
 * slot has ended, so the holds' `endsAt` moves with it.
 */
export async function deliverSession(app: () => ConsultationApp, seller: TestUser, sessionId: string) {
  await passSlotOf(sessionId);
  const started = await as(app, seller)('POST', `/consultations/sessions/${sessionId}/start`, {
    actualStartTime: new Date(Date.now() - 30_000).toISOString(),
  });
  if (started.status !== 200) throw new Error(`start: ${started.status} ${JSON.stringify(started.body)}`);
  const ended = await as(app, seller)('POST', `/consultations/sessions/${sessionId}/end`, {});
  if (ended.status !== 200) throw new Error(`end: ${ended.status} ${JSON.stringify(ended.body)}`);
}
