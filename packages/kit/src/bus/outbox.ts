import mongoose from 'mongoose';
import type { IntegrationEvent } from '@mkt/contracts';
import type { Logger } from '../logger';
import type { AnyModel } from '../mongo';
import { getMetrics } from '../metrics';
import type { Bus } from './bus';

/**
 * Transactional outbox without transactions: a state change and the events it causes are one
 * single-document write (`$push: { pendingEvents: event }` beside the change). The relay
 * publishes them with confirms and `$pull`s each after its confirm; the sweeper republishes
 * whatever a crash or a broker outage left behind. Delivery is at least once.
 */
/** An array of free-form subdocuments (typed loosely: mongoose cannot type them). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const freeFormArrayField: any = { type: [mongoose.Schema.Types.Mixed], default: [] };
/** Where a document keeps the events of its state changes until they are published. */
export const pendingEventsField = freeFormArrayField;

export interface OutboxDocument {
  _id: unknown;
  pendingEvents?: IntegrationEvent[];
}

export interface OutboxSource {
  name: string;
  model: AnyModel;
}

export interface OutboxOptions {
  bus: Bus;
  log: Logger;
  sources: OutboxSource[];
  sweepIntervalMs?: number;
  /** The sweeper leaves events younger than this to the immediate flush after the write. */
  graceMs?: number;
  batchSize?: number;
}

export class OutboxRelay {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  private readonly publishing = new Set<string>();

  constructor(private readonly options: OutboxOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.options.sweepIntervalMs ?? 5_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
  }

  /** Publishes the pending events of one document now; never throws (the sweeper retries). */
  async flush(model: AnyModel, id: unknown): Promise<void> {
    try {
      const doc = await model.findById(id, { pendingEvents: 1 }).lean<OutboxDocument>();
      if (doc) await this.publishDocument(model, doc);
    } catch (err) {
      this.options.log.warn({ err: (err as Error).message }, 'outbox flush failed; the sweeper will retry');
    }
  }

  /** Publishes every event older than the grace period, source by source. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepAll().finally(() => {
      this.sweeping = null;
    });
    return this.sweeping;
  }

  private async sweepAll(): Promise<void> {
    const cutoff = new Date(Date.now() - (this.options.graceMs ?? 3_000)).toISOString();
    for (const { name, model } of this.options.sources) {
      try {
        const docs = await model
          .find({ 'pendingEvents.occurredAt': { $lte: cutoff } }, { pendingEvents: 1 })
          .limit(this.options.batchSize ?? 100)
          .lean<OutboxDocument[]>();
        for (const doc of docs) await this.publishDocument(model, doc);
        const backlog = await model.countDocuments({ 'pendingEvents.id': { $exists: true } });
        getMetrics().outboxBacklog.set({ source: name }, backlog);
      } catch (err) {
        this.options.log.warn({ err: (err as Error).message, source: name }, 'outbox sweep failed');
      }
    }
  }

  /** In order; stops at the first failure so a document's events never overtake each other. */
  private async publishDocument(model: AnyModel, doc: OutboxDocument): Promise<void> {
    const events = [...(doc.pendingEvents ?? [])].sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
    // Another flush or sweep of this process is on this document: leave it to that one.
    if (events.some((event) => this.publishing.has(event.id))) return;
    for (const event of events) this.publishing.add(event.id);
    try {
      await drainPendingItems(model, doc._id, 'pendingEvents', events, (event) => this.options.bus.publish(event));
    } finally {
      for (const event of events) this.publishing.delete(event.id);
    }
  }
}

/**
 * Hands each item of a document's pending array to `deliver`, in order, and removes it after
 * `deliver` succeeded. The pull names the stored object itself, as read: FerretDB 1.x's `$pull`
 * matches whole values only (no conditions such as `{ id }`), and an equal document matches on
 * MongoDB too. Delivery is at least once: `deliver` must tolerate a repeat.
 */
export async function drainPendingItems<T>(
  model: AnyModel,
  id: unknown,
  field: string,
  items: T[],
  deliver: (item: T) => Promise<void>,
): Promise<void> {
  for (const item of items) {
    await deliver(item);
    await model.collection.updateOne({ _id: id } as object, { $pull: { [field]: item } } as object);
  }
}
