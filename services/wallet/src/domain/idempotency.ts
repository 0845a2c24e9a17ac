import { IdempotentRequests, type Attempt, type StoredResponse } from '@mkt/kit';
import { IdempotencyRecord } from '../db/records.model';

export { IDEMPOTENCY_LEASE_MS, IDEMPOTENCY_TTL_MS, requestFingerprint, type Attempt, type StoredResponse } from '@mkt/kit';

/** The wallet's keyed creates (top-ups, payouts, transfers): kit's Idempotency-Key semantics on its `idempotency_keys`. */
const requests = new IdempotentRequests(IdempotencyRecord);

/**
 * Runs a create once per (user, scope, Idempotency-Key): the same key and request replays the
 * first answer, the same key with another request is 409 (kit's `IdempotentRequests`).
 */
export function idempotent(
  scope: string,
  userId: string,
  key: string | undefined,
  request: unknown,
  run: (attempt: Attempt) => Promise<StoredResponse>,
  now?: () => Date,
): Promise<StoredResponse> {
  return requests.run(scope, userId, key, request, run, now);
}

export function deleteExpiredIdempotencyKeys(now = new Date()): Promise<void> {
  return requests.deleteExpired(now);
}
