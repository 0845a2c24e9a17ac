import { createHash } from 'node:crypto';
import { BadRequest, isDuplicateKey, toHttpError } from '@mkt/kit';
import { IdempotencyRecord } from '../db/records.model';
import { IdempotencyKeyReused, IdempotentRequestInFlight } from './wallet.errors';

export interface StoredResponse {
  status: number;
  body: unknown;
}

const KEY_PATTERN = /^[\w\-:.]{1,200}$/;
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

function fingerprint(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

/**
 * Runs a create once per (user, scope, Idempotency-Key): the same key and request replays the
 * first answer (errors of the client included), the same key with another request is 409. A
 * failure of ours (5xx) frees the key so the client can retry.
 */
export async function idempotent(
  scope: string,
  userId: string,
  key: string | undefined,
  request: unknown,
  run: () => Promise<StoredResponse>,
): Promise<StoredResponse> {
  if (key === undefined) return run();
  if (!KEY_PATTERN.test(key)) throw new BadRequest('Idempotency-Key has 1 to 200 letters, digits or _-:.', 'Idempotency-Key');
  const id = `${userId}:${scope}:${key}`;
  const requestHash = fingerprint(request);
  try {
    await IdempotencyRecord.create({ _id: id, requestHash, state: 'in_progress', createdAt: new Date() });
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const first = await IdempotencyRecord.findById(id).lean();
    if (!first) throw err;
    if (first.requestHash !== requestHash) throw new IdempotencyKeyReused();
    if (first.state !== 'done') throw new IdempotentRequestInFlight();
    return { status: first.status!, body: first.body };
  }
  try {
    const response = await run();
    await IdempotencyRecord.updateOne({ _id: id }, { $set: { state: 'done', status: response.status, body: response.body } });
    return response;
  } catch (err) {
    const mapped = toHttpError(err);
    if (mapped.status >= 500) await IdempotencyRecord.deleteOne({ _id: id });
    else await IdempotencyRecord.updateOne({ _id: id }, { $set: { state: 'done', status: mapped.status, body: mapped.body } });
    throw err;
  }
}

export async function deleteExpiredIdempotencyKeys(now = new Date()): Promise<void> {
  await IdempotencyRecord.deleteMany({ createdAt: { $lt: new Date(now.getTime() - IDEMPOTENCY_TTL_MS) } });
}
