import { ErrorCode } from '@mkt/contracts/consultation';
import { AppError, RuleViolation } from '@mkt/kit/domain';

export class SlotUnavailable extends RuleViolation {
  constructor(message = 'This time is not bookable') {
    super(ErrorCode.slotUnavailable, message);
  }
}
export class CouponInvalid extends RuleViolation {
  constructor(reason: string) {
    super(ErrorCode.couponInvalid, reason, 'couponCode');
  }
}
/**
 * `expected` null: the right figure is not told — after a coupon it would reveal the discount
 * of a guessed code.
 */
export class PriceMismatch extends RuleViolation {
  constructor(field: 'subTotal' | 'totalAmount' | 'currency', expected: string | null) {
    super('price_mismatch', expected === null ? `${field} does not match the price` : `${field} must be ${expected}`, field);
  }
}
export class NotBookable extends RuleViolation {
  constructor(message = 'This consultation is not open for booking') {
    super('not_bookable', message);
  }
}
export class RefundTooLarge extends RuleViolation {
  constructor() {
    super('refund_too_large', 'refundAmount is more than was paid', 'refundAmount');
  }
}
/** Naming another seller's rule set or pricing is touching their record (ADR 0003): 403. */
export class ForeignRecord extends AppError {
  constructor(path: string, what: string) {
    const message = `The ${what} belongs to another seller`;
    super(403, ErrorCode.forbidden, message, [{ path, code: ErrorCode.forbidden, message }]);
  }
}
/** A seller may have at most so many consultations (config `MAX_CONSULTATIONS_PER_SELLER`). */
export class ConsultationLimitReached extends RuleViolation {
  constructor(max: number) {
    super(ErrorCode.limitReached, `A seller may have at most ${max} consultations`);
  }
}
/** The buyer's wallet could not hold the total: the booking is Failed, its places given back. */
export class InsufficientFunds extends RuleViolation {
  constructor() {
    super(ErrorCode.insufficientFunds, 'The wallet’s available balance is lower than the total', 'totalAmount');
  }
}
/** The wallet will not hold this payment for a reason a retry does not change (another currency). */
export class PaymentDeclined extends RuleViolation {
  constructor() {
    super('payment_declined', 'The wallet cannot pay this booking (for example, it holds another currency)', 'currency');
  }
}
/** The payment was given up (its deadline passed) before the wallet held it. */
export class PaymentGivenUp extends RuleViolation {
  constructor() {
    super('payment_failed', 'The payment could not be completed; the booking was not made');
  }
}
/** Cancelling is open until the session starts (no refund after delivery). */
export class CancellationClosed extends RuleViolation {
  constructor() {
    super('cancellation_closed', 'A booking can be cancelled only before its session starts');
  }
}
