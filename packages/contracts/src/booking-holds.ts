import { z } from 'zod';
import { NON_BLANK } from './schema-meta';
import { Currency, PositiveMinorAmount } from './money';
import { referenceOf } from './references';

/**
 * The wallet's internal hold of a booking, apart from the wallet's public schemas: the
 * consultation (its only caller) loads these without the rest of the wallet's area.
 */

/**
 * The internal hold of a paid booking (consultation → wallet, service credential, never
 * through the gateway): idempotent by `bookingId`.
 */
export const CreateBookingHoldBody = z
  .object({
    bookingId: z.string().trim().min(1).max(100).meta(NON_BLANK),
    buyerId: z.string().trim().min(1).max(100).meta(NON_BLANK),
    buyerRef: referenceOf('USR'),
    sellerId: z.string().trim().min(1).max(100).meta(NON_BLANK),
    amountMinor: PositiveMinorAmount,
    currency: Currency,
    /**
     * Added (optional, so a consultation of the previous release still holds): when the booked
     * slot ends. The wallet captures the hold no earlier than this, whatever the session says.
     */
    endsAt: z.string().datetime({ offset: true }).optional(),
    /** Added (optional): the booked consultation, so a seller's earnings show per consultation. */
    consultationId: z.string().trim().min(1).max(100).optional(),
  })
  .strict();
export type CreateBookingHoldBody = z.infer<typeof CreateBookingHoldBody>;

/** What a booking record says that its hold is made of (the consultation's bookings, as stored). */
export interface BookingToHold {
  _id: string;
  buyerId: string;
  buyerRef: string;
  sellerId: string;
  totalAmountMinor: number;
  currency: string;
  /** The slot's end: a Date as stored, or its ISO text. */
  endsAt: Date | string;
  consultationId: string;
}

/**
 * The body of the wallet's internal hold of a booking: the one way to write it, for the
 * consultation's booking flow and the operations tools (scripts/reconcile.mjs) alike. The whole
 * total is held, and the wallet captures it no earlier than the slot's end, whatever a session
 * move says.
 */
export function bookingHoldBody(booking: BookingToHold): CreateBookingHoldBody {
  return {
    bookingId: booking._id,
    buyerId: booking.buyerId,
    buyerRef: booking.buyerRef,
    sellerId: booking.sellerId,
    amountMinor: booking.totalAmountMinor,
    currency: booking.currency,
    endsAt: new Date(booking.endsAt).toISOString(),
    consultationId: booking.consultationId,
  };
}

export const BOOKING_HOLD_STATUSES = ['Pending', 'Held', 'Rejected', 'Voided', 'Settling', 'Settled'] as const;
export const BookingHoldStatus = z.enum(BOOKING_HOLD_STATUSES).meta({ id: 'BookingHoldStatus' });
export type BookingHoldStatus = z.infer<typeof BookingHoldStatus>;

/** What ended or will end a hold: capture (delivered), cancel (refund), void (never paid). */
export const HoldSettlement = z.enum(['capture', 'cancel', 'void']).meta({ id: 'HoldSettlement' });

export const BookingHoldView = z.object({
  bookingId: z.string(),
  status: BookingHoldStatus,
  /** What ended or will end the hold: capture (delivered), cancel (refund), void (never paid). */
  settlement: HoldSettlement.nullable(),
  amountMinor: z.number().int(),
  currency: z.string(),
});
export type BookingHoldView = z.infer<typeof BookingHoldView>;
export const BookingHoldParams = z
  .object({
    bookingId: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .meta({ ...NON_BLANK, description: 'The booking’s id (bk_…), as `bookingId` of the booking.' }),
  })
  .strict();
