/**
 * `@mkt/kit/domain`: kit's pure part — the errors a rule answers with and the calendar windows of
 * limits (no express, mongoose, amqplib or logger behind this entry). The only kit entry a
 * service's `domain/` may import (lint); the other layers take the errors from here too.
 */
export { type CalendarUnit, calendarWindow } from '../calendar';
export {
  AppError,
  Conflict,
  Forbidden,
  foundOr404,
  InvalidField,
  InvalidState,
  isDuplicateKey,
  isNeverSent,
  isOutcomeUnknown,
  NotFound,
  PayloadTooLarge,
  RateLimited,
  RuleViolation,
  toHttpError,
  Unauthenticated,
} from '../errors';
