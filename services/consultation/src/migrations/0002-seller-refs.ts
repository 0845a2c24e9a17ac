import type { Migration } from '@mkt/kit/db';

/**
 * Consultations made before `sellerRef` was kept get their seller's USR reference, so that a
 * booking's `SellerId` may name the seller by reference on every consultation. The reference is
 * the one this database already holds for that user: on another of their consultations
 * (`sellerRef`), else on a booking they made as a buyer (`buyerRef`). Each write is conditional
 * (`sellerRef` still unset), so a run again after a crash, or beside a request that sets it,
 * changes nothing twice. A seller of whom this database holds no reference yet keeps `null`
 * (their id still works as `SellerId`), and a later run of the same step fills it.
 *
 * Reversible: `down` unsets what `up` filled (marked `sellerRefBackfilled`), nothing else.
 */
export const sellerRefs: Migration = {
  name: '0002-seller-refs',
  up: async ({ db, log }) => {
    const consultations = db.collection<{ _id: string; sellerId: string; sellerRef?: string | null }>('consultations');
    const bookings = db.collection<{ _id: string; buyerId: string; buyerRef?: string | null }>('bookings');
    const unset = { $or: [{ sellerRef: null }, { sellerRef: '' }] };
    const sellers: string[] = await consultations.distinct('sellerId', unset);
    let filled = 0;
    let unknown = 0;
    for (const sellerId of sellers) {
      const known = await consultations.findOne({ sellerId, sellerRef: { $nin: [null, ''] } }, { projection: { sellerRef: 1 } });
      const bought = known
        ? null
        : await bookings.findOne({ buyerId: sellerId, buyerRef: { $nin: [null, ''] } }, { projection: { buyerRef: 1 } });
      const ref = known?.sellerRef ?? bought?.buyerRef;
      if (!ref) {
        unknown += 1;
        continue;
      }
      const result = await consultations.updateMany({ sellerId, ...unset }, { $set: { sellerRef: ref, sellerRefBackfilled: true } });
      filled += result.modifiedCount;
    }
    log.info({ sellers: sellers.length, filled, sellersWithoutReference: unknown }, 'seller references backfilled');
  },
  down: async ({ db }) => {
    await db
      .collection('consultations')
      .updateMany({ sellerRefBackfilled: true }, { $set: { sellerRef: null }, $unset: { sellerRefBackfilled: '' } });
  },
};
