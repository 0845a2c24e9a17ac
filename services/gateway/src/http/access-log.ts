import type { IncomingMessage, ServerResponse } from 'node:http';
import { getMetrics, observeWithTrace } from '@mkt/kit/metrics';
import type { Logger } from '@mkt/kit/logger';

/**
 * What the gateway records of each request it answers on its hot path, once the answer is
 * finished (or abandoned): the `marketplace_http_request_duration_seconds` observation (route `proxy:<upstream>`,
 * or `edge` for refusals) and one log line with the same fields as the services' request lines
 * (`reqId`, `req.method`, `req.url`, `res.statusCode`, `responseTime`) plus the `upstream`.
 * Answers of 400 and above are always logged; successful ones with probability `sampleRate`
 * (1: all), which a busy gateway can lower. Query secrets are scrubbed by the gateway logger,
 * which writes asynchronously (see main.ts).
 */
export class AccessLog {
  private readonly duration = getMetrics().httpDuration;
  private readonly log: Logger;

  constructor(
    log: Logger,
    private readonly sampleRate: number,
  ) {
    // These lines have a fixed shape without credentials (the URL's query secrets are scrubbed
    // by the logger's stream hook): field redaction, half the cost of a line, is skipped.
    this.log = log.child({}, { redact: [] });
  }

  track(req: IncomingMessage, res: ServerResponse, reqId: string, upstream: string | null): void {
    const started = performance.now();
    res.once('close', () => this.write(req, res, reqId, upstream, started));
  }

  private write(req: IncomingMessage, res: ServerResponse, reqId: string, upstream: string | null, started: number): void {
    const ms = performance.now() - started;
    const finished = res.writableFinished;
    const status = res.statusCode;
    observeWithTrace(
      this.duration,
      { method: req.method ?? 'GET', route: upstream ? `proxy:${upstream}` : 'edge', status: String(status) },
      ms / 1000,
    );
    if (finished && status < 400 && (this.sampleRate === 0 || (this.sampleRate < 1 && Math.random() >= this.sampleRate))) return;
    const level = status >= 500 ? 'error' : status >= 400 || !finished ? 'warn' : 'info';
    this.log[level](
      { reqId, req: { method: req.method, url: req.url }, res: { statusCode: status }, responseTime: Math.round(ms), upstream },
      finished ? 'request completed' : 'request aborted',
    );
  }
}
