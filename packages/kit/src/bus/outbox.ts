import mongoose from 'mongoose';
import { routingKeyOf, type IntegrationEvent } from '@mkt/contracts/core';
import type { Logger } from '../logger';
import type { AnyModel } from '../mongo';
import { getMetrics } from '../metrics';
import { publishSpan } from '../tracing';
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

/**
 * The sweeper asks each source for documents with a pending event: a sparse index on
 * `pendingEvents.id` holds only those, so the query stays cheap however many documents there are.
 */
export async function ensureOutboxIndexes(sources: OutboxSource[]): Promise<void> {
  for (const { model } of sources) await model.collection.createIndex({ 'pendingEvents.id': 1 }, { sparse: true, name: 'outbox_pending' });
}

/** The relay that publishes each source model's outbox (set when the relay is made). */
const relays = new WeakMap<AnyModel, OutboxRelay>();

/**
 * Called by the repository that wrote events into a document's outbox, once the write has
 * returned: the relay of that model publishes them now, never awaited (the answer does not wait on
 * the broker) and never throwing. `target` is the document as the write returned it (nothing is
 * read) or its id. A model no relay sweeps is left alone; a failed publish is left to the sweep.
 */
export function eventsWritten(model: AnyModel, target: OutboxDocument | string): void {
  const relay = relays.get(model);
  if (relay) void relay.flush(model, target);
}

export class OutboxRelay {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;
  /** The grace of the sweep `sweeping` ends with. */
  private sweepingGraceMs = Infinity;
  private readonly publishing = new Set<string>();

  /** Each source's writes are published by this relay from now on (`eventsWritten`). */
  constructor(private readonly options: OutboxOptions) {
    for (const { model } of options.sources) relays.set(model, this);
  }

  /**
   * Sweeps on a timer, and at once each time the broker (re)connects: a flush that failed while
   * it was away leaves its events to be published then, not after the grace period and the
   * next tick (nothing of this process is publishing them at that moment).
   */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.options.sweepIntervalMs ?? 5_000);
    this.timer.unref();
    this.options.bus.on('connected', this.sweepOnConnect);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.options.bus.off('connected', this.sweepOnConnect);
    await this.sweeping;
  }

  private readonly sweepOnConnect = (): void => void this.sweep({ graceMs: 0 });

  /**
   * Publishes the pending events of one document now; never throws (the sweeper retries).
   * Given the document as the write returned it (`new: true`), it reads nothing; given an id,
   * it reads the document's pending events first.
   */
  async flush(model: AnyModel, target: OutboxDocument | string): Promise<void> {
    try {
      const doc = typeof target === 'string' ? await model.findById(target, { pendingEvents: 1 }).lean<OutboxDocument>() : target;
      if (doc?.pendingEvents?.length) await this.publishDocument(model, doc, false);
    } catch (err) {
      this.options.log.warn({ err }, 'outbox flush failed; the sweeper will retry');
    }
  }

  /**
   * Publishes every event older than the grace period (the option's, or `graceMs` given),
   * source by source. One sweep at a time: asked while one runs, it joins it — or, asked with
   * a shorter grace, runs once more after it.
   */
  sweep(options: { graceMs?: number } = {}): Promise<void> {
    const graceMs = options.graceMs ?? this.options.graceMs ?? 3_000;
    if (this.sweeping && graceMs >= this.sweepingGraceMs) return this.sweeping;
    const after = this.sweeping ?? Promise.resolve();
    this.sweepingGraceMs = graceMs;
    const run: Promise<void> = after
      .then(() => this.sweepAll(graceMs))
      .finally(() => {
        if (this.sweeping !== run) return;
        this.sweeping = null;
        this.sweepingGraceMs = Infinity;
      });
    this.sweeping = run;
    return run;
  }

  /**
   * One query per source: the documents that hold any pending event (a sparse index on
   * `pendingEvents.id` keeps it cheap on MongoDB). Events younger than the grace period are
   * left to the flush that follows their write. The backlog gauge counts documents.
   */
  private async sweepAll(graceMs: number): Promise<void> {
    const cutoff = new Date(Date.now() - graceMs).toISOString();
    const batchSize = this.options.batchSize ?? 100;
    for (const { name, model } of this.options.sources) {
      try {
        const pending = { 'pendingEvents.id': { $exists: true } };
        const docs = await model.find(pending, { pendingEvents: 1 }).limit(batchSize).lean<OutboxDocument[]>();
        const backlog = docs.length < batchSize ? docs.length : await model.countDocuments(pending);
        getMetrics().outboxBacklog.set({ source: name }, backlog);
        const oldest = docs
          .flatMap((doc) => (doc.pendingEvents ?? []).map((event) => Date.parse(event.occurredAt)))
          .reduce((a, b) => Math.min(a, b), Infinity);
        getMetrics().outboxOldestPendingAge.set({ source: name }, Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0);
        for (const doc of docs) {
          if (doc.pendingEvents?.some((event) => event.occurredAt <= cutoff)) await this.publishDocument(model, doc, true);
        }
      } catch (err) {
        this.options.log.warn({ err, source: name }, 'outbox sweep failed');
      }
    }
  }

  /**
   * In order; stops at the first failure so a document's events never overtake each other.
   * Each publish is a span in the trace stored on the event when it was written (`swept`: by the
   * sweeper, e.g. after a crash, also linked to it); the AMQP headers carry the span's context.
   */
  private async publishDocument(model: AnyModel, doc: OutboxDocument, swept: boolean): Promise<void> {
    const events = [...(doc.pendingEvents ?? [])].sort((a, b) => a.occurredAt.localeCompare(b.occurredAt));
    // Another flush or sweep of this process is on this document: leave it to that one.
    if (events.some((event) => this.publishing.has(event.id))) return;
    for (const event of events) this.publishing.add(event.id);
    try {
      const { bus } = this.options;
      await drainPendingItems(model, doc._id, 'pendingEvents', events, (event) => {
        const { traceparent, tracestate, ...body } = event;
        const info = {
          destination: bus.names.events,
          routingKey: routingKeyOf(event.type, event.version),
          messageId: event.id,
          correlationId: event.correlationId,
        };
        return publishSpan(info, { traceparent, tracestate }, swept, (headers) => bus.publish(body, headers));
      });
    } finally {
      for (const event of events) this.publishing.delete(event.id);
    }
  }
}

/**
 * Hands each item of a document's pending array to `deliver`, in order, then removes the
 * delivered ones in one update (also after a failure, which stops the run so that items never
 * overtake each other). The pull names the stored objects themselves, as read, so it needs no
 * key inside them. Delivery is at least once: `deliver` must tolerate a repeat.
 */
export async function drainPendingItems<T>(
  model: AnyModel,
  id: unknown,
  field: string,
  items: T[],
  deliver: (item: T) => Promise<void>,
): Promise<void> {
  const delivered: T[] = [];
  try {
    for (const item of items) {
      await deliver(item);
      delivered.push(item);
    }
  } finally {
    if (delivered.length > 0) await model.collection.updateOne({ _id: id } as object, { $pull: { [field]: { $in: delivered } } } as object);
  }
}
