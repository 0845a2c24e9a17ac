import { createHmac, timingSafeEqual } from 'node:crypto';
import { decimalStringToMinor, formatMinor } from '@mkt/contracts/wallet';
import { PaymentProviderFailed } from '../domain/errors';
import type { CheckoutRequest, CheckoutSession, PaymentProvider, Verification } from './provider';

export interface ChapaSettings {
  baseUrl: string;
  secretKey: string;
  webhookSecret: string;
  /** Where Chapa posts its webhook (our public address). */
  callbackUrl: string;
  timeoutMs: number;
}

interface ChapaAnswer {
  status?: string;
  message?: unknown;
  data?: { checkout_url?: string; status?: string; amount?: string | number; currency?: string; tx_ref?: string } | null;
}

/** Chapa's hosted checkout: initialize, verify, and a webhook signed with HMAC-SHA256. */
export class ChapaProvider implements PaymentProvider {
  readonly name = 'chapa' as const;

  constructor(private readonly settings: ChapaSettings) {}

  async initialize(request: CheckoutRequest): Promise<CheckoutSession> {
    const [firstName, ...rest] = request.fullName.split(' ');
    const answer = await this.call('POST', '/v1/transaction/initialize', {
      amount: formatMinor(request.amountMinor),
      currency: request.currency,
      email: request.email,
      first_name: firstName,
      last_name: rest.join(' ') || firstName,
      tx_ref: request.referenceId,
      callback_url: this.settings.callbackUrl,
      return_url: request.returnUrl,
      customization: { title: 'Wallet top-up' },
    });
    const url = answer.data?.checkout_url;
    if (answer.status !== 'success' || !url) throw new PaymentProviderFailed('Chapa did not open a checkout');
    return { paymentUrl: url };
  }

  async verify(referenceId: string): Promise<Verification> {
    const answer = await this.call('GET', `/v1/transaction/verify/${encodeURIComponent(referenceId)}`);
    const data = answer.data;
    const status = data?.status === 'success' ? 'success' : data?.status === 'failed' ? 'failed' : 'pending';
    const amountMinor = data?.amount === undefined ? null : decimalStringToMinor(String(data.amount));
    return { status, amountMinor, currency: data?.currency ?? null };
  }

  readWebhook(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): string | null {
    const given = headers['x-chapa-signature'] ?? headers['chapa-signature'];
    if (typeof given !== 'string' || !/^[0-9a-f]{64}$/i.test(given)) return null;
    const expected = createHmac('sha256', this.settings.webhookSecret).update(rawBody).digest();
    if (!timingSafeEqual(expected, Buffer.from(given, 'hex'))) return null;
    try {
      const body = JSON.parse(rawBody.toString('utf8')) as { tx_ref?: unknown; trx_ref?: unknown };
      const reference = body.tx_ref ?? body.trx_ref;
      return typeof reference === 'string' ? reference : null;
    } catch {
      return null;
    }
  }

  private async call(method: 'GET' | 'POST', path: string, body?: object): Promise<ChapaAnswer> {
    let res: Response;
    try {
      res = await fetch(`${this.settings.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.settings.secretKey}`, 'content-type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
    } catch (err) {
      throw new PaymentProviderFailed(`Chapa is unreachable: ${(err as Error).message}`);
    }
    const answer = (await res.json().catch(() => ({}))) as ChapaAnswer;
    if (!res.ok && res.status !== 400 && res.status !== 404) throw new PaymentProviderFailed(`Chapa answered ${res.status}`);
    return answer;
  }
}
