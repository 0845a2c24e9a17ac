/**
 * `@mkt/kit/domain`: what a service's pure `domain/` may use of kit — the errors a rule answers
 * with, and the calendar windows of limits (no express, mongoose, amqplib or logger behind this entry). The lint rule of docs/architecture.md
 * allows this entry, and not `@mkt/kit`, in `domain/`.
 */
export * from './errors';
export * from './calendar';
