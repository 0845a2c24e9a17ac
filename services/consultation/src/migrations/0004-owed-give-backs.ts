import type { Migration } from '@mkt/kit/db';
import { flagOwedGiveBacks } from '../db/booking.repository';
import type { BookingDoc } from '../domain/records';

/** The sparse index of the given-up bookings still owing a give-back (the model declares the same). */
const OWED_INDEX = { key: { owed: 1 }, name: 'owed_1', sparse: true } as const;

/**
 * The sweep finds the give-backs it owes by `owed` alone, through a sparse index that holds only
 * the bookings that carry it. This builds that index, then sets `owed` on every booking already
 * given up (Failed, Cancelled) whose last give-back (`slot`) is not recorded — written before the
 * flag existed, by a replica of the previous release or restored from an older backup — so the
 * sweep finishes them as before. The rule is `flagOwedGiveBacks`'s, the one the sweep also looks
 * with now and then for bookings given up after this ran by a process of a version before the
 * flag. The write is conditional on the flag's absence: a run again after a crash changes nothing
 * twice.
 *
 * Reversible: `down` drops the index and the flag (the previous release reads neither).
 */
export const owedGiveBacks: Migration = {
  name: '0004-owed-give-backs',
  up: async ({ db, log }) => {
    const bookings = db.collection<BookingDoc>('bookings');
    const { key, ...options } = OWED_INDEX;
    await bookings.createIndex(key, options);
    const owed = await flagOwedGiveBacks(bookings);
    log.info({ owed }, 'given-up bookings still owing a give-back flagged for the sweep');
  },
  down: async ({ db }) => {
    const bookings = db.collection('bookings');
    await bookings.updateMany({ owed: { $exists: true } }, { $unset: { owed: '' } });
    if ((await bookings.indexExists(OWED_INDEX.name)) as boolean) await bookings.dropIndex(OWED_INDEX.name);
  },
};
