import { createHash, randomUUID } from 'node:crypto';
import { Schema, type Model } from 'mongoose';
import { BadRequest, Conflict, isDuplicateKey, toHttpError } from './errors';

/**
 * `Idempotency-Key` for creates that move money (the wallet's semantics, shared): the same key
 * and request replays the first answer, the same key with another request is 409. One record
 * per (user, scope, key), claimed by an insert (the unique `_id` decides a race).
 */
export interface IdempotencyRecordDoc {
  _id: string;
  requestHash: string;
  state: 'in_progress' | 'done';
  /** The id the operation gives what it creates, the same for every attempt under this key. */
  resourceId: string | null;
  /** Until when the attempt in progress owns the key; a later retry may take it over. */
  leaseUntil: Date | null;
  status: number | null;
  body: unknown;
  createdAt: Date;
}

/** The schema of a service's key collection: `mongoose.model(name, idempotencyRecordSchema(), collection)`. */
export function idempotencyRecordSchema(): Schema<IdempotencyRecordDoc> {
  return new Schema<IdempotencyRecordDoc>(
    {
      _id: { type: String, required: true },
      requestHash: { type: String, required: true },
      state: { type: String, required: true },
      resourceId: { type: String, default: null },
      leaseUntil: { type: Date, default: null },
      status: { type: Number, default: null },
      body: { type: Schema.Types.Mixed, default: null },
      createdAt: { type: Date, required: true, index: true },
    },
    { versionKey: false },
  );
}

export interface StoredResponse {
  status: number;
  body: unknown;
}

/** One attempt of a keyed operation: what it creates gets `resourceId`; `retaken` when an earlier attempt died. */
export interface Attempt {
  resourceId: string;
  retaken: boolean;
}

export class IdempotencyKeyReused extends Conflict {
  constructor() {
    super('This Idempotency-Key was used with another request');
  }
}

export class IdempotentRequestInFlight extends Conflict {
  constructor() {
    super('A request with this Idempotency-Key is still being processed');
  }
}

const KEY_PATTERN = /^[\w\-:.]{1,200}$/;
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/**
 * How long an attempt owns its key: longer than any request lives (the gateway's route timeout
 * is shorter). Past it, the attempt is taken for dead (its process ended before storing the
 * answer) and a retry carries on.
 */
export const IDEMPOTENCY_LEASE_MS = 60_000;

export function requestFingerprint(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

/**
 * Runs keyed creates once per (user, scope, Idempotency-Key). While an attempt runs, a duplicate
 * is 409 `conflict` (answered at once; the client retries later). A throttle (429) frees the key;
 * a failure of ours (5xx) ends the attempt's lease, so the next retry takes it over with the same
 * resource id (what the failed attempt did is found and finished, not done again); other client
 * errors are kept and replayed. An attempt whose process died before storing its answer is taken over by the first
 * retry after its lease, with the same `resourceId`, so the operation finds what the dead
 * attempt created and finishes it instead of doing it twice.
 */
export class IdempotentRequests {
  /** `newResourceId`: how the operation names what it creates (e.g. a booking id), so a retaken attempt finds it. */
  constructor(
    private readonly model: Model<IdempotencyRecordDoc>,
    private readonly newResourceId: () => string = randomUUID,
  ) {}

  async run(
    scope: string,
    userId: string,
    key: string | undefined,
    request: unknown,
    operation: (attempt: Attempt) => Promise<StoredResponse>,
    now: () => Date = () => new Date(),
  ): Promise<StoredResponse> {
    if (key === undefined) return operation({ resourceId: this.newResourceId(), retaken: false });
    if (!KEY_PATTERN.test(key)) throw new BadRequest('Idempotency-Key has 1 to 200 letters, digits or _-:.', 'Idempotency-Key');
    const id = `${userId}:${scope}:${key}`;
    const claimed = await this.claim(id, requestFingerprint(request), now());
    if ('replay' in claimed) return claimed.replay;
    const { leaseUntil, ...attempt } = claimed;
    try {
      const response = await operation(attempt);
      await this.model.updateOne({ _id: id }, { $set: { state: 'done', status: response.status, body: response.body, leaseUntil: null } });
      return response;
    } catch (err) {
      const mapped = toHttpError(err);
      // Only while still ours (a retry may have taken over a slow attempt). A throttle (429)
      // refused before anything was done: the key is freed. A failure of ours (5xx), or an
      // attempt that says its work is still under way, may have done part of its work (a hold
      // taken before the database went away): its lease ends now, so the next retry takes it
      // over with the same resource id and finishes that work — never a second one.
      if (mapped.status === 429) await this.model.deleteOne({ _id: id, state: 'in_progress', leaseUntil });
      else if (mapped.status >= 500 || err instanceof IdempotentRequestInFlight)
        await this.model.updateOne({ _id: id, state: 'in_progress', leaseUntil }, { $set: { leaseUntil: new Date(0) } });
      else await this.model.updateOne({ _id: id }, { $set: { state: 'done', status: mapped.status, body: mapped.body, leaseUntil: null } });
      throw err;
    }
  }

  /** Forgets keys older than `IDEMPOTENCY_TTL_MS` (the development server enforces no TTL index). */
  async deleteExpired(now = new Date()): Promise<void> {
    await this.model.deleteMany({ createdAt: { $lt: new Date(now.getTime() - IDEMPOTENCY_TTL_MS) } });
  }

  private async claim(id: string, requestHash: string, at: Date): Promise<(Attempt & { leaseUntil: Date }) | { replay: StoredResponse }> {
    const leaseUntil = new Date(at.getTime() + IDEMPOTENCY_LEASE_MS);
    const resourceId = this.newResourceId();
    try {
      await this.model.create({ _id: id, requestHash, state: 'in_progress', resourceId, leaseUntil, createdAt: at });
      return { resourceId, retaken: false, leaseUntil };
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const first = await this.model.findById(id).lean<IdempotencyRecordDoc>();
    if (!first) throw new IdempotentRequestInFlight(); // freed by a failure this instant: the client retries
    if (first.requestHash !== requestHash) throw new IdempotencyKeyReused();
    if (first.state === 'done') return { replay: { status: first.status!, body: first.body } };
    if ((first.leaseUntil ?? first.createdAt) > at) throw new IdempotentRequestInFlight();
    // The attempt died: the first retry to move the lease on takes the key over (a racing one gets 409).
    const taken = await this.model
      .findOneAndUpdate(
        { _id: id, state: 'in_progress', leaseUntil: first.leaseUntil },
        { $set: { leaseUntil, resourceId: first.resourceId ?? resourceId } },
        { new: true },
      )
      .lean<IdempotencyRecordDoc>();
    if (!taken) throw new IdempotentRequestInFlight();
    return { resourceId: taken.resourceId!, retaken: true, leaseUntil };
  }
}
