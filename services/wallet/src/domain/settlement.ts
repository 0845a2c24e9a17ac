import { makeEvent, type IntegrationEvent } from '@mkt/contracts/wallet';
import type { BookingHoldDoc, Settlement, SettlementKind } from './records';

/**
 * How a hold of `amountMinor` is split when it ends. capture: all to the seller; void: all
 * back to the buyer; cancel: the refund asked for (never more than held) back to the buyer,
 * the rest to the seller. The platform fee (basis points, rounded down) comes off what the
 * seller receives. Integer arithmetic only; the parts always sum to the hold.
 */
export function settlementOf(
  kind: SettlementKind,
  amountMinor: number,
  requestedRefundMinor: number,
  feeBps: number,
): Omit<Settlement, 'decidedAt'> {
  const refundMinor = kind === 'capture' ? 0 : kind === 'void' ? amountMinor : Math.min(Math.max(0, requestedRefundMinor), amountMinor);
  const captureMinor = amountMinor - refundMinor;
  // Split so no product passes 2^53: (q·10⁴ + r)·bps / 10⁴ = q·bps + r·bps / 10⁴.
  const whole = Math.floor(captureMinor / 10_000);
  const feeMinor = whole * feeBps + Math.floor(((captureMinor - whole * 10_000) * feeBps) / 10_000);
  return { kind, refundMinor, captureMinor, feeMinor };
}

/**
 * When a settlement decided at `now` may move its money. A capture waits for the booked slot's
 * end: a seller who starts and ends the session early is paid only once the time the buyer
 * bought is over (an audit found sellers paid, and paid out, 15 minutes into an hour). A hold
 * without `endsAt` (booked through a consultation of the previous release) and every refund
 * move at once. Null: at once.
 */
export function settlementDueAt(kind: SettlementKind, endsAt: Date | null, now: Date): Date | null {
  return kind === 'capture' && endsAt && endsAt.getTime() > now.getTime() ? endsAt : null;
}

export function isSettlementDue(dueAt: Date | null, now: Date): boolean {
  return !dueAt || dueAt.getTime() <= now.getTime();
}

/**
 * How much of a captured amount the buyer had received from the seller by transfers (at most
 * the amount): money that went from the seller to the buyer and back at capture is not a
 * customer's payment, and the capture event says so.
 */
export function sellerFundedOf(capturedMinor: number, receivedFromSellerMinor: number): number {
  return Math.min(capturedMinor, Math.max(0, receivedFromSellerMinor));
}

/**
 * What a finished settlement tells the others: captured (with `sellerFundedMinor`, what the
 * buyer had received from the seller by transfers), or refunded (an admin's void says so).
 */
export function settlementEvent(record: BookingHoldDoc, correlationId: string, receivedFromSellerMinor = 0): IntegrationEvent | null {
  const s = record.settlement!;
  const origin = { source: 'wallet', correlationId };
  const parties = { bookingId: record._id, buyerId: record.buyerId, sellerId: record.sellerId };
  if (s.kind === 'capture')
    return makeEvent(
      'wallet.booking_payment.captured',
      {
        ...parties,
        amountMinor: s.captureMinor,
        feeMinor: s.feeMinor,
        currency: record.currency,
        sellerFundedMinor: sellerFundedOf(s.captureMinor, receivedFromSellerMinor),
      },
      origin,
    );
  // A void the consultation asked for needs no answer (it gave the booking up itself); an
  // admin's void does: the consultation cancels the booking from it.
  if (s.kind === 'void' && !s.byAdmin) return null;
  return makeEvent(
    'wallet.booking_refund.completed',
    {
      ...parties,
      refundAmountMinor: s.refundMinor,
      capturedAmountMinor: s.captureMinor,
      currency: record.currency,
      ...(s.byAdmin ? { voidedByAdmin: true } : {}),
    },
    origin,
  );
}
