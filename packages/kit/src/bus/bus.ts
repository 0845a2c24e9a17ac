import { EventEmitter } from 'node:events';
import amqp, { type ChannelModel, type ConfirmChannel, type Options } from 'amqplib';
import { routingKeyOf, SUBSCRIPTION_LIST, type IntegrationEvent, type Subscription } from '@mkt/contracts/core';
import type { Logger } from '../logger';
import { readCaFile } from '../config';
import { getMetrics } from '../metrics';
import { Consumer, type ConsumerSpec } from './consumer';
import { amqpUser, type PublisherTrust } from './publishers';
import { BusNames, QueueMigrationNeeded, assertExchanges, assertSubscriptionQueues, queueNames } from './topology';

export interface BusOptions {
  url: string;
  log: Logger;
  /** Reconnect backoff bounds. */
  minReconnectDelayMs?: number;
  maxReconnectDelayMs?: number;
  /** How long a publish waits for the broker's confirm. */
  confirmTimeoutMs?: number;
  /** Prefix of exchange and queue names (BUS_NAMESPACE); empty in production. */
  namespace?: string;
  /**
   * The consuming queues declared (with their dead-letter queues and bindings) on every connect
   * before anything is published; by default every one of the platform (`SUBSCRIPTIONS`).
   */
  subscriptions?: readonly Subscription[];
  /**
   * Every service's broker user, `{service}` standing for its name (BUS_PUBLISHER_USERS): set, a
   * consumer takes an event only when its AMQP `user-id` is its owner's user (`refusalOf`).
   */
  publisherUsers?: string;
  /** AMQP_TLS_CA_FILE: the CA the broker's certificate is verified against (an `amqps://` url). */
  tlsCaFile?: string;
}

/**
 * The TLS socket options of a connection to `url`: an `amqps://` url verifies the broker's
 * certificate (and its host name) against `caFile`, read now, else the system's CAs; a CA file with
 * a plain `amqp://` url is a configuration error. Verification is never turned off.
 */
export function amqpTlsOptions(url: string, caFile?: string): { ca?: Buffer[] } {
  const secure = url.toLowerCase().startsWith('amqps://');
  if (!caFile) return {};
  if (!secure) throw new Error('AMQP_TLS_CA_FILE is set but AMQP_URL is not amqps://');
  return { ca: [readCaFile('AMQP_TLS_CA_FILE', caFile)] };
}

export class BusUnavailable extends Error {
  constructor(reason: string) {
    super(`The message broker is not available: ${reason}`);
  }
}

/**
 * One AMQP connection per process that heals itself: when the broker goes away it reconnects
 * with backoff, asserts the topology again (the exchanges and every subscription's queues, so
 * an event published before its consumer first ran is kept) and restarts every registered
 * consumer; only then does it publish. Publishing
 * uses a confirm channel; a publish resolves only after the broker has confirmed the message.
 */
export class Bus extends EventEmitter {
  private connection: ChannelModel | null = null;
  private publishChannel: ConfirmChannel | null = null;
  private readonly consumers: Consumer[] = [];
  private closing = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private wakeUp: (() => void) | null = null;
  private connecting: Promise<void> | null = null;

  readonly names: BusNames;
  /** Who this process's consumers take events from. */
  readonly trust: PublisherTrust;
  private readonly tls: { ca?: Buffer[] };

  constructor(private readonly options: BusOptions) {
    super();
    this.tls = amqpTlsOptions(options.url, options.tlsCaFile);
    this.names = new BusNames(options.namespace);
    this.trust = { ownUser: amqpUser(options.url), publisherUsers: options.publisherUsers || undefined };
  }

  get log(): Logger {
    return this.options.log;
  }

  isConnected(): boolean {
    return this.publishChannel !== null;
  }

  /** Starts connecting; resolves once connected the first time, or rejects after `timeoutMs`. */
  async start(timeoutMs = 60_000): Promise<void> {
    this.connectSoon(0);
    await this.waitUntilConnected(timeoutMs);
  }

  waitUntilConnected(timeoutMs: number): Promise<void> {
    if (this.isConnected()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('connected', onConnected);
        reject(new BusUnavailable(`not connected within ${timeoutMs} ms`));
      }, timeoutMs);
      const onConnected = () => {
        clearTimeout(timer);
        resolve();
      };
      this.once('connected', onConnected);
    });
  }

  /** Registers a consumer; it starts now when connected, and again after every reconnect. */
  async consume(spec: ConsumerSpec): Promise<Consumer> {
    const consumer = new Consumer(spec, this, this.options.log);
    this.consumers.push(consumer);
    if (this.connection) await consumer.start(this.connection);
    return consumer;
  }

  /**
   * Publishes an event and waits for the broker's confirm. Throws when not confirmed. `headers`:
   * AMQP headers (the trace context, `traceparent`/`tracestate`).
   */
  async publish(
    event: IntegrationEvent | { id: string; type: string; version?: number; correlationId: string },
    headers?: Record<string, string>,
  ): Promise<void> {
    // Version 1 under the bare type, version N ≥ 2 under `<type>.v<N>` (routingKeyOf).
    await this.publishRaw(this.names.events, routingKeyOf(event.type, event.version ?? 1), Buffer.from(JSON.stringify(event)), {
      messageId: event.id,
      type: event.type,
      correlationId: event.correlationId,
      ...(headers ? { headers } : {}),
    }).then(
      () => getMetrics().eventsPublished.inc({ type: event.type, outcome: 'confirmed' }),
      (err: unknown) => {
        getMetrics().eventsPublished.inc({ type: event.type, outcome: 'failed' });
        throw err;
      },
    );
  }

  /**
   * Messages waiting in each consumer queue's dead-letter queue (`<queue>.dlq`), on a channel of
   * its own that is closed after; null when not connected (a scrape then asks nothing).
   */
  async deadLetterDepths(): Promise<Map<string, number> | null> {
    const connection = this.connection;
    if (!connection || !this.publishChannel) return null;
    const channel = await connection.createChannel();
    channel.on('error', () => undefined); // a queue not declared yet closes the channel: no depth
    const depths = new Map<string, number>();
    try {
      for (const consumer of this.consumers)
        depths.set(consumer.queue, (await channel.checkQueue(queueNames(consumer.queue, 0).deadLetter)).messageCount);
    } catch {
      // The channel is gone; the depths read so far stand.
    }
    await channel.close().catch(() => undefined);
    return depths;
  }

  /**
   * Publishes bytes to an exchange (or a queue through ''), persistent, with confirm. Every
   * message carries the AMQP `user-id` of the connection's user: the broker checks it, and the
   * consumers check it is the owner of the event.
   */
  publishRaw(exchange: string, routingKey: string, content: Buffer, properties: Options.Publish = {}): Promise<void> {
    const channel = this.publishChannel;
    if (!channel) return Promise.reject(new BusUnavailable('not connected'));
    const timeoutMs = this.options.confirmTimeoutMs ?? 10_000;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new BusUnavailable(`no confirm within ${timeoutMs} ms`)), timeoutMs);
      try {
        channel.publish(
          exchange,
          routingKey,
          content,
          {
            persistent: true,
            contentType: 'application/json',
            timestamp: Math.floor(Date.now() / 1000),
            ...properties,
            userId: this.trust.ownUser,
          },
          (err) => {
            clearTimeout(timer);
            if (err) reject(new BusUnavailable(err instanceof Error ? err.message : String(err)));
            else resolve();
          },
        );
      } catch (err) {
        clearTimeout(timer);
        reject(new BusUnavailable((err as Error).message));
      }
    });
  }

  /** Stops consumers (letting in-flight messages finish), then closes the connection. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    this.wakeUp?.();
    await Promise.all(this.consumers.map((consumer) => consumer.stop()));
    await this.connecting?.catch(() => undefined);
    const connection = this.connection;
    this.connection = null;
    this.publishChannel = null;
    await connection?.close().catch(() => undefined);
  }

  /** Connects, retrying with backoff until connected or closing; one loop at a time. */
  private connectSoon(initialDelayMs: number): void {
    if (this.closing || this.connecting) return;
    this.connecting = this.connectLoop(initialDelayMs).finally(() => {
      this.connecting = null;
    });
  }

  private async connectLoop(initialDelayMs: number): Promise<void> {
    let delay = initialDelayMs;
    const maxDelay = this.options.maxReconnectDelayMs ?? 5_000;
    while (!this.closing) {
      if (delay > 0) await this.sleep(delay);
      if (this.closing) return;
      try {
        await this.connectOnce();
        return;
      } catch (err) {
        if (err instanceof QueueMigrationNeeded) {
          // Not a passing fault: this version stays off the broker (its events wait in the
          // outbox, the API goes on) until the documented migration has run.
          delay = maxDelay;
          this.log.error({ queue: err.queue, retryInMs: delay }, err.message);
          continue;
        }
        delay = Math.min(Math.max(delay * 2, this.options.minReconnectDelayMs ?? 200), maxDelay);
        this.log.warn({ err, retryInMs: delay }, 'broker not reachable');
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wakeUp = resolve;
      this.reconnectTimer = setTimeout(() => {
        this.reconnectTimer = null;
        this.wakeUp = null;
        resolve();
      }, ms);
    });
  }

  private async connectOnce(): Promise<void> {
    const connection = await amqp.connect(this.options.url, { timeout: 5_000, ...this.tls });
    let topologyMs = 0;
    try {
      connection.on('error', (err: Error) => this.log.warn({ err }, 'broker connection error'));
      connection.on('close', () => this.onConnectionLost(connection));
      const channel = await connection.createConfirmChannel();
      channel.on('error', (err: Error) => this.log.warn({ err }, 'publish channel error'));
      channel.on('close', () => {
        if (this.publishChannel !== channel) return;
        this.publishChannel = null;
        // A channel can die alone (e.g. a publish to a missing exchange): start over cleanly.
        void connection.close().catch(() => undefined);
      });
      const began = performance.now();
      await assertExchanges(channel, this.names);
      await assertSubscriptionQueues(connection, this.options.subscriptions ?? SUBSCRIPTION_LIST, this.names);
      topologyMs = Math.round(performance.now() - began);
      this.connection = connection;
      for (const consumer of this.consumers) await consumer.start(connection);
      this.publishChannel = channel;
    } catch (err) {
      this.connection = null;
      this.publishChannel = null;
      await connection.close().catch(() => undefined);
      throw err;
    }
    this.log.info({ topologyMs }, 'broker connected');
    this.emit('connected');
  }

  private onConnectionLost(connection: ChannelModel): void {
    if (this.connection !== connection) return;
    this.connection = null;
    this.publishChannel = null;
    if (this.closing) return;
    this.log.warn('broker connection lost; reconnecting');
    this.emit('disconnected');
    this.connectSoon(this.options.minReconnectDelayMs ?? 200);
  }
}
