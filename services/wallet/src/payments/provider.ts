/** What a top-up needs from a hosted-checkout provider. */
export interface CheckoutRequest {
  referenceId: string;
  amountMinor: number;
  currency: string;
  email: string;
  fullName: string;
  /** Where the provider sends the payer back (our redirect, which then goes to the client's). */
  returnUrl: string;
}

export interface CheckoutSession {
  paymentUrl: string;
  /** For providers whose page we serve: the secret the page posts back. */
  checkoutToken?: string;
}

// What a provider says of a payment is the domain's to judge (`verdictOf`): the type is its.
export type { Verification, VerifiedStatus } from '../domain/topups';
import type { Verification } from '../domain/topups';

export interface PaymentProvider {
  readonly name: 'sandbox' | 'chapa';
  initialize(request: CheckoutRequest): Promise<CheckoutSession>;
  /** Asks the provider what happened to a payment; never trusts a webhook alone. */
  verify(referenceId: string): Promise<Verification>;
  /** Checks a webhook's signature over the raw body; returns the reference it is about. */
  readWebhook(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): string | null;
}
