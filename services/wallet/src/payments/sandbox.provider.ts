import { randomBytes } from 'node:crypto';
import type { CheckoutRequest, CheckoutSession, PaymentProvider, Verification } from './provider';

/**
 * The development provider: the checkout page is ours (`/wallets/checkout/{reference}`), so
 * its Pay button is the payment. The token in the URL is the only key to the page.
 */
export class SandboxProvider implements PaymentProvider {
  readonly name = 'sandbox' as const;

  constructor(private readonly publicUrl: string) {}

  async initialize(request: CheckoutRequest): Promise<CheckoutSession> {
    const checkoutToken = randomBytes(32).toString('base64url');
    const paymentUrl = `${this.publicUrl}/wallets/checkout/${encodeURIComponent(request.referenceId)}?token=${checkoutToken}`;
    return { paymentUrl, checkoutToken };
  }

  async verify(): Promise<Verification> {
    // The page reports the outcome itself; nothing is pending elsewhere.
    return { status: 'pending', amountMinor: null, currency: null };
  }

  readWebhook(): string | null {
    return null;
  }
}
