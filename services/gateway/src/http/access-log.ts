import type { IncomingMessage, ServerResponse } from 'node:http';
import { getMetrics, observeWithTrace } from '@mkt/kit/metrics';
import { activeContext, runInContext, tracingEnabled } from '@mkt/kit/tracing';
import type { Logger } from '@mkt/kit/logger';

/** A request's trace context, as kept to write its line later. */
type TraceContext = ReturnType<typeof activeContext>;

/**
 * What the gateway records of each request it answers on its hot path, once the answer is
 * finished (or abandoned): the `marketplace_http_request_duration_seconds` observation (route `proxy:<upstream>`,
 * or `edge` for refusals) and one log line with the same fields as the services' request lines
 * (`reqId`, `req.method`, `req.url`, `res.statusCode`, `responseTime`) plus the `upstream`.
 * Always logged: answers of 400 and above, abandoned ones, every method but GET and HEAD, and
 * answers that took `slowMs` or longer; the other answers — successful fast reads, most of the
 * traffic — with probability `sampleRate` (ACCESS_LOG_SAMPLE_RATE; 1: all). Query secrets are
 * scrubbed by the gateway logger, which writes asynchronously (see main.ts).
 */
export class AccessLog {
  private readonly duration = getMetrics().httpDuration;
  /** With tracing on, an observation carries the sampled trace as its exemplar; off, there is none to look up. */
  private readonly exemplars = tracingEnabled();
  private readonly log: Logger;

  constructor(
    log: Logger,
    private readonly sampleRate: number,
    private readonly slowMs = Infinity,
  ) {
    // These lines have a fixed shape without credentials (the URL's query secrets are scrubbed
    // by the logger's stream hook): field redaction, half the cost of a line, is skipped.
    this.log = log.child({}, { redact: [] });
  }

  track(req: IncomingMessage, res: ServerResponse, reqId: string, upstream: string | null): void {
    const started = performance.now();
    // The observation's exemplar (tracing on) and the line's trace ids are the request's: its
    // context is kept (the response's listeners are not bound to it) and entered only to write a
    // line — most answers write none, and binding a listener per request cost more than the line.
    // Kept with tracing off too: a request's `close` may run in the context of another request
    // whose socket it reused (an incoming traceparent it continued), whose ids the line must not carry.
    const trace = activeContext();
    res.once('close', () => this.write(req, res, reqId, upstream, started, trace));
  }

  private write(
    req: IncomingMessage,
    res: ServerResponse,
    reqId: string,
    upstream: string | null,
    started: number,
    trace: TraceContext,
  ): void {
    const ms = performance.now() - started;
    const finished = res.writableFinished;
    const status = res.statusCode;
    const method = req.method ?? 'GET';
    const labels = { method, route: upstream ? `proxy:${upstream}` : 'edge', status: String(status) };
    if (this.exemplars) observeWithTrace(this.duration, labels, ms / 1000, trace);
    else (this.duration.observe as unknown as (observation: object) => void)({ labels, value: ms / 1000 });
    if (finished && status < 400 && (method === 'GET' || method === 'HEAD') && ms < this.slowMs && !this.sampled()) return;
    const level = status >= 500 ? 'error' : status >= 400 || !finished ? 'warn' : 'info';
    const line = () =>
      this.log[level](
        { reqId, req: { method: req.method, url: req.url }, res: { statusCode: status }, responseTime: Math.round(ms), upstream },
        finished ? 'request completed' : 'request aborted',
      );
    runInContext(trace, line);
  }

  private sampled(): boolean {
    return this.sampleRate >= 1 || (this.sampleRate > 0 && Math.random() < this.sampleRate);
  }
}
