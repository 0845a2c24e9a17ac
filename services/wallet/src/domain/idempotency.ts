import { createHash, randomUUID } from 'node:crypto';
import { BadRequest, isDuplicateKey, toHttpError } from '@mkt/kit';
import { IdempotencyRecord, type IdempotencyDoc } from '../db/records.model';
import { IdempotencyKeyReused, IdempotentRequestInFlight } from './wallet.errors';

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** One attempt of a keyed operation: what it creates gets `resourceId`; `retaken` when an earlier attempt died. */
export interface Attempt {
  resourceId: string;
  retaken: boolean;
}

const KEY_PATTERN = /^[\w\-:.]{1,200}$/;
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/**
 * How long an attempt owns its key: longer than any request lives (the provider call is
 * bounded by CHAPA_TIMEOUT_MS, the gateway's route timeout is shorter). Past it, the attempt
 * is taken for dead (the process ended before storing the answer) and a retry carries on.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;

export function requestFingerprint(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

/**
 * Runs a create once per (user, scope, Idempotency-Key): the same key and request replays the
 * first answer (errors of the client included), the same key with another request is 409.
 * While an attempt runs, a duplicate is 409 `conflict` (answered at once; the client retries
 * later). A failure of ours (5xx) frees the key; an attempt whose process died before storing
 * its answer is taken over by the first retry after its lease, with the same `resourceId`, so
 * the operation finds what the dead attempt created and finishes it instead of doing it twice.
 */
export async function idempotent(
  scope: string,
  userId: string,
  key: string | undefined,
  request: unknown,
  run: (attempt: Attempt) => Promise<StoredResponse>,
  now: () => Date = () => new Date(),
): Promise<StoredResponse> {
  if (key === undefined) return run({ resourceId: randomUUID(), retaken: false });
  if (!KEY_PATTERN.test(key)) throw new BadRequest('Idempotency-Key has 1 to 200 letters, digits or _-:.', 'Idempotency-Key');
  const id = `${userId}:${scope}:${key}`;
  const requestHash = requestFingerprint(request);
  const claimed = await claim(id, requestHash, now());
  if ('replay' in claimed) return claimed.replay;
  const { leaseUntil, ...attempt } = claimed;
  try {
    const response = await run(attempt);
    await IdempotencyRecord.updateOne(
      { _id: id },
      { $set: { state: 'done', status: response.status, body: response.body, leaseUntil: null } },
    );
    return response;
  } catch (err) {
    const mapped = toHttpError(err);
    // Freed only while still ours (a retry may have taken over a slow attempt).
    if (mapped.status >= 500) await IdempotencyRecord.deleteOne({ _id: id, state: 'in_progress', leaseUntil });
    else
      await IdempotencyRecord.updateOne(
        { _id: id },
        { $set: { state: 'done', status: mapped.status, body: mapped.body, leaseUntil: null } },
      );
    throw err;
  }
}

async function claim(id: string, requestHash: string, at: Date): Promise<(Attempt & { leaseUntil: Date }) | { replay: StoredResponse }> {
  const leaseUntil = new Date(at.getTime() + IDEMPOTENCY_LEASE_MS);
  const resourceId = randomUUID();
  try {
    await IdempotencyRecord.create({ _id: id, requestHash, state: 'in_progress', resourceId, leaseUntil, createdAt: at });
    return { resourceId, retaken: false, leaseUntil };
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
  }
  const first = await IdempotencyRecord.findById(id).lean<IdempotencyDoc>();
  if (!first) throw new IdempotentRequestInFlight(); // freed by a failure this instant: the client retries
  if (first.requestHash !== requestHash) throw new IdempotencyKeyReused();
  if (first.state === 'done') return { replay: { status: first.status!, body: first.body } };
  // Records from before leases count from their creation.
  const heldUntil = first.leaseUntil ?? new Date(first.createdAt.getTime() + IDEMPOTENCY_LEASE_MS);
  if (heldUntil > at) throw new IdempotentRequestInFlight();
  // The attempt died: the first retry to move the lease on takes the key over (a racing one gets 409).
  const taken = await IdempotencyRecord.findOneAndUpdate(
    { _id: id, state: 'in_progress', leaseUntil: first.leaseUntil },
    { $set: { leaseUntil, resourceId: first.resourceId ?? resourceId } },
    { new: true },
  ).lean<IdempotencyDoc>();
  if (!taken) throw new IdempotentRequestInFlight();
  return { resourceId: taken.resourceId!, retaken: true, leaseUntil };
}

export async function deleteExpiredIdempotencyKeys(now = new Date()): Promise<void> {
  await IdempotencyRecord.deleteMany({ createdAt: { $lt: new Date(now.getTime() - IDEMPOTENCY_TTL_MS) } });
}
