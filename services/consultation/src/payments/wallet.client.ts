import { outgoingTraceHeaders, type Logger } from '@mkt/kit';

export interface HoldRequest {
  bookingId: string;
  buyerId: string;
  buyerRef: string;
  sellerId: string;
  amountMinor: number;
  currency: string;
  /** The slot's end (ISO): the wallet captures the hold no earlier than this. */
  endsAt: string;
}

/**
 * What the wallet said: held; refused (short of funds); declined (a rule that will not change on
 * a retry, e.g. the wallet holds another currency); voided (given up); or nothing usable.
 */
export type HoldAnswer = 'held' | 'refused' | 'declined' | 'voided' | 'unreachable';

export interface WalletClientSettings {
  url: string;
  token: string;
  timeoutMs: number;
}

interface HoldBody {
  success?: boolean;
  data?: { status?: string; settlement?: string | null };
  errors?: Array<{ code?: string }>;
}

/**
 * The wallet's internal API, called synchronously because the client waits for the booking's
 * answer. Both calls are idempotent by booking id, so a timeout is simply asked again later;
 * anything that is not a clear answer (timeout, 5xx, a refused credential) is `unreachable`.
 */
export class WalletClient {
  constructor(
    private readonly settings: WalletClientSettings,
    private readonly log: Logger,
  ) {}

  /** `correlationId`: the booking request's, sent on so the wallet's logs and events carry it. */
  async hold(request: HoldRequest, correlationId: string): Promise<HoldAnswer> {
    const res = await this.post('/internal/holds', request, correlationId);
    if (!res) return 'unreachable';
    if (res.status === 422 && res.body.errors?.[0]?.code === 'insufficient_funds') return 'refused';
    if (res.status === 422 || res.status === 400) {
      this.log.warn({ bookingId: request.bookingId, status: res.status, code: res.body.errors?.[0]?.code }, 'wallet declined the hold');
      return 'declined';
    }
    if (res.status !== 200) return this.unusable(request.bookingId, res.status);
    const { status, settlement } = res.body.data ?? {};
    if (status === 'Voided' || settlement === 'void') return 'voided';
    return status === 'Held' || status === 'Settling' || status === 'Settled' ? 'held' : 'unreachable';
  }

  /** Gives a booking's payment up: whatever the wallet held goes back, a late hold holds nothing. */
  async void(bookingId: string, correlationId: string): Promise<'voided' | 'unreachable'> {
    const res = await this.post(`/internal/holds/${encodeURIComponent(bookingId)}/void`, {}, correlationId);
    if (!res) return 'unreachable';
    if (res.status === 200) return 'voided';
    return this.unusable(bookingId, res.status) as 'unreachable';
  }

  private unusable(bookingId: string, status: number): 'unreachable' {
    // 401 means the credentials differ between the services: loud, since nothing can be paid.
    (status === 401 || status === 409 ? this.log.error : this.log.warn).call(this.log, { bookingId, status }, 'unexpected wallet answer');
    return 'unreachable';
  }

  private async post(path: string, body: object, correlationId: string): Promise<{ status: number; body: HoldBody } | null> {
    try {
      const res = await fetch(`${this.settings.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-internal-token': this.settings.token,
          'x-correlation-id': correlationId,
          // The request's trace (with tracing on, the fetch instrumentation sends it instead).
          ...outgoingTraceHeaders(),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
      return { status: res.status, body: (await res.json().catch(() => ({}))) as HoldBody };
    } catch (err) {
      this.log.warn({ err, path, correlationId }, 'wallet not reachable; the booking waits for the sweep');
      return null;
    }
  }
}
