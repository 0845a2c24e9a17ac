import { ErrorCode } from '@mkt/contracts/wallet';
import { AppError, InvalidField, RuleViolation } from '@mkt/kit/domain';

export class InsufficientFunds extends RuleViolation {
  constructor() {
    super(ErrorCode.insufficientFunds, 'Available balance is lower than the amount', 'amount');
  }
}

/** A credit that would take a wallet past its balance ceiling (or an amount over a maximum). */
export class BalanceCeilingExceeded extends RuleViolation {
  constructor(message = 'The wallet balance would pass its ceiling', path = 'amount') {
    super(ErrorCode.balanceLimitExceeded, message, path);
  }
}

export class AmountTooLarge extends RuleViolation {
  constructor(maxMinor: number) {
    super(ErrorCode.amountTooLarge, `The amount is more than the maximum of ${(maxMinor / 100).toFixed(2)}`, 'amount');
  }
}

export class RedirectNotAllowed extends InvalidField {
  constructor() {
    super('redirectUrl must be on an allowed origin (CHECKOUT_REDIRECT_ORIGINS)', 'redirectUrl');
  }
}

export class CurrencyMismatch extends RuleViolation {
  constructor(expected: string) {
    super(ErrorCode.currencyMismatch, `The wallet holds ${expected}`, 'currency');
  }
}

export class UnknownBank extends InvalidField {
  constructor() {
    super('No active bank has this code', 'bankCode');
  }
}

export class BadAccountNumber extends InvalidField {
  constructor(length: number) {
    super(`The account number has ${length} digits at this bank`, 'accountNumber');
  }
}

export class PaymentProviderFailed extends AppError {
  constructor(message: string) {
    super(502, ErrorCode.paymentProviderFailed, message);
  }
}
