import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { outgoingTraceHeaders, propagateTraceTo } from '@mkt/kit/tracing';
import type { Logger } from '@mkt/kit/logger';
import type { CreateBookingHoldBody } from '@mkt/contracts/consultation';

/** The wallet's internal hold request (built by `bookingHoldBody`, from the contracts). */
export type HoldRequest = CreateBookingHoldBody;

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
  private readonly url: URL;
  private readonly request: typeof httpRequest;
  /**
   * One kept-alive pool to the wallet for the process: a hold reuses the last idle
   * connection (LIFO) and is a plain `http.request` — no fetch machinery (WHATWG streams,
   * `AbortSignal` and its timer) set up per call.
   */
  private readonly agent: HttpAgent;

  constructor(
    private readonly settings: WalletClientSettings,
    private readonly log: Logger,
  ) {
    this.url = new URL(settings.url);
    // The wallet is one of ours: the calls carry the trace context.
    propagateTraceTo(settings.url);
    const https = this.url.protocol === 'https:';
    this.request = https ? httpsRequest : httpRequest;
    const options = { keepAlive: true, scheduling: 'lifo' as const, maxSockets: 64 };
    this.agent = https ? new HttpsAgent(options) : new HttpAgent(options);
  }

  /** Closes the idle connections (at shutdown). */
  close(): void {
    this.agent.destroy();
  }

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
      const payload = JSON.stringify(body);
      return await this.send(path, payload, correlationId).catch((err: NodeJS.ErrnoException & { reusedSocket?: boolean }) => {
        // A kept-alive connection the wallet closed as it was reused: asked again once on a new
        // one (both calls are idempotent by booking id).
        if (err.reusedSocket && err.code === 'ECONNRESET') return this.send(path, payload, correlationId);
        throw err;
      });
    } catch (err) {
      this.log.warn({ err, path, correlationId }, 'wallet not reachable; the booking waits for the sweep');
      return null;
    }
  }

  /** One POST on the pool; no answer within `timeoutMs` (from the request's start) is an error. */
  private send(path: string, payload: string, correlationId: string): Promise<{ status: number; body: HoldBody }> {
    return new Promise((resolve, reject) => {
      const req = this.request(
        {
          protocol: this.url.protocol,
          hostname: this.url.hostname,
          port: this.url.port,
          path: `${this.url.pathname.replace(/\/$/, '')}${path}`,
          method: 'POST',
          agent: this.agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            'x-internal-token': this.settings.token,
            'x-correlation-id': correlationId,
            // The request's trace (with tracing on, the http instrumentation sends it instead).
            ...outgoingTraceHeaders(),
          },
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            clearTimeout(timer);
            let parsed: HoldBody = {};
            try {
              parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as HoldBody;
            } catch {
              // not JSON: the status alone decides
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
          res.on('error', reject);
        },
      );
      const timer = setTimeout(
        () => req.destroy(new Error(`no answer from the wallet within ${this.settings.timeoutMs} ms`)),
        this.settings.timeoutMs,
      );
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(Object.assign(err, { reusedSocket: req.reusedSocket }));
      });
      req.end(payload);
    });
  }
}
