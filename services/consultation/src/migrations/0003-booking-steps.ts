import type { Migration } from '@mkt/kit/db';

/** Every give-back of the booking flow, as a booking given back whole records them. */
const ALL_GIVEN_BACK = ['confirm', 'coupon', 'day', 'slot'];

/**
 * Bookings written before the booking flow recorded its give-backs step by step kept one flag,
 * `released` (its places, coupon use and seat given back, or not). Each becomes the flow's own
 * record, `compensated`: released → every give-back recorded (its flow is finished); not released
 * → none (a Failed or Cancelled one is given back by the sweep, each give-back guarded by the
 * booking's id, so what a crash already gave back is not given twice); a booking without either
 * field gets none. Each write is conditional on the old field (or the new one missing), so a run
 * again after a crash changes nothing twice.
 *
 * Reversible: `down` maps `compensated` back to `released` (given back whole when `slot`, the
 * last give-back, is recorded).
 */
export const bookingSteps: Migration = {
  name: '0003-booking-steps',
  up: async ({ db, log }) => {
    const bookings = db.collection('bookings');
    const whole = await bookings.updateMany({ released: true }, { $set: { compensated: ALL_GIVEN_BACK }, $unset: { released: '' } });
    const none = await bookings.updateMany({ released: { $exists: true } }, { $set: { compensated: [] }, $unset: { released: '' } });
    const fresh = await bookings.updateMany({ compensated: { $exists: false } }, { $set: { compensated: [] } });
    log.info(
      { givenBackWhole: whole.modifiedCount, notGivenBack: none.modifiedCount, withoutFlag: fresh.modifiedCount },
      'bookings’ released flags mapped to their flow’s give-backs',
    );
  },
  down: async ({ db }) => {
    const bookings = db.collection('bookings');
    await bookings.updateMany({ compensated: 'slot' }, { $set: { released: true }, $unset: { compensated: '' } });
    await bookings.updateMany({ compensated: { $exists: true } }, { $set: { released: false }, $unset: { compensated: '' } });
  },
};
