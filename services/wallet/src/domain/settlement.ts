import type { Settlement, SettlementKind } from '../db/booking-hold.model';

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
