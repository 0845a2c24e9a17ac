import { randomBytes } from 'node:crypto';
import net, { type AddressInfo, type Socket } from 'node:net';
import { testServers } from '@mkt/infra';
import {
  apiOf,
  bookingBody,
  dayFromNow,
  fundedBuyer,
  loginAdmin,
  offerConsultation,
  offerSoonSlot,
  register,
  slotsOf,
  waitFor,
  waitForSlotStart,
} from './fixtures';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver';
import { startSystem, type System } from './system';

/**
 * Traces: the system exports over OTLP http/json to a receiver in this process, every process
 * sampling new traces at a ratio of 0, the gateway trusting its caller's trace context
 * (TRACE_TRUST_INCOMING_TRACEPARENT=true; untrusted, trace-edge.test.ts). A client's sampled
 * trace (`traceparent` sent to the gateway) is followed and covers a paid booking and its session's end:
 * gateway → consultation → wallet (the hold), the outbox's publish, and the CRM's and review's
 * handling, every span's parent in the trace. And an event left in the outbox by a producer
 * killed while the broker was away is published after the restart in the trace of its request.
 */

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

/** A TCP proxy to the broker for one service, that can be cut (the broker away for it alone) and restored. */
function startBrokerLink(target: { host: string; port: number }) {
  const open = new Set<Socket>();
  let cut = false;
  const server = net.createServer((client) => {
    if (cut) return client.destroy();
    const upstream = net.connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        open.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  return new Promise<{ port: number; cut: () => void; restore: () => void; close: () => Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        cut: () => {
          cut = true;
          for (const socket of open) socket.destroy();
        },
        restore: () => {
          cut = false;
        },
        close: () =>
          new Promise((done) => {
            for (const socket of open) socket.destroy();
            server.close(() => done());
          }),
      }),
    ),
  );
}

let receiver: OtlpReceiver;
let brokerLink: Awaited<ReturnType<typeof startBrokerLink>>;
let system: System;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const amqp = new URL(testServers().amqpUrl);
  brokerLink = await startBrokerLink({ host: amqp.hostname, port: Number(amqp.port || 5672) });
  const viaLink = new URL(amqp.href);
  viaLink.hostname = '127.0.0.1';
  viaLink.port = String(brokerLink.port);
  system = await startSystem({
    env: receiver.env,
    envOf: { consultation: { AMQP_URL: viaLink.href }, gateway: { TRACE_TRUST_INCOMING_TRACEPARENT: 'true' } },
  });
}, 120_000);
afterAll(async () => {
  await system?.stop();
  await brokerLink?.close();
  await receiver?.close();
}, 60_000);

/** A client's own trace: the parent it names in `traceparent`. */
function clientTrace() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, headers: { traceparent: `00-${traceId}-${spanId}-01` } };
}

const inTrace = (traceId: string) => receiver.spans.filter((span) => span.traceId === traceId);
const find = (traceId: string, match: (span: ReceivedSpan) => boolean) => inTrace(traceId).find(match);
const waitForSpan = (what: string, traceId: string, match: (span: ReceivedSpan) => boolean) =>
  waitFor(
    what,
    async () => find(traceId, match),
    (span) => span !== undefined,
    30_000,
  ) as Promise<ReceivedSpan>;
const serverSpan = (service: string, route?: string) => (span: ReceivedSpan) =>
  span.service === service &&
  span.kind === SERVER &&
  (!route || String(span.attributes['http.route'] ?? span.attributes['url.path'] ?? span.name).includes(route));
const consumerSpan = (service: string, type: string) => (span: ReceivedSpan) =>
  span.service === service && span.kind === CONSUMER && span.attributes['messaging.rabbitmq.destination.routing_key'] === type;

/** The span's parent is the client's span or another span of the trace: one tree. */
function expectParentIn(traceId: string, root: string, span: ReceivedSpan) {
  const ids = new Set([root, ...inTrace(traceId).map((each) => each.spanId)]);
  expect({ span: `${span.service} ${span.name}`, parentKnown: ids.has(span.parentSpanId) }).toEqual({
    span: `${span.service} ${span.name}`,
    parentKnown: true,
  });
}

/** The consumer's parent is a publish span (of `producer`) in the same trace (waited for: each process exports on its own). */
async function expectPublishedBy(consumer: ReceivedSpan, producer: string): Promise<ReceivedSpan> {
  const publish = await waitForSpan('the publish span', consumer.traceId, (span) => span.spanId === consumer.parentSpanId);
  expect(publish).toMatchObject({ service: producer, kind: PRODUCER });
  expect(publish.attributes['messaging.rabbitmq.destination.routing_key']).toBe(
    consumer.attributes['messaging.rabbitmq.destination.routing_key'],
  );
  return publish;
}

test('a paid booking and its session’s end: one trace from the gateway through consultation, the wallet, the outbox, the CRM and review', async () => {
  const admin = await loginAdmin(system);
  const seller = await register(system, 'seller');
  const buyer = await fundedBuyer(system, 300);
  const soon = await offerSoonSlot(system, seller, admin, { priceMajor: 100 });
  const client = clientTrace();

  const booking = await apiOf(system, buyer)(
    'POST',
    '/consultations/bookings',
    bookingBody(soon.offer, soon.slot, buyer.email),
    client.headers,
  );
  expect(booking.status).toBe(200);
  const sessionId = booking.body.data.sessionId as string;
  expect((await apiOf(system, seller)('POST', `/consultations/sessions/${sessionId}/start`, {}, client.headers)).status).toBe(200);
  await waitForSlotStart(soon.startsAt);
  const ended = await apiOf(system, seller)(
    'POST',
    `/consultations/sessions/${sessionId}/end`,
    { sessionSummary: 'Good plan' },
    client.headers,
  );
  expect(ended.body.data?.status).toBe('Completed');

  const { traceId, spanId: root } = client;
  const gateway = await waitForSpan('gateway server span', traceId, serverSpan('gateway', '/consultations/bookings'));
  expect(gateway.parentSpanId).toBe(root);
  // The correlation id (the request id events carry) is on the request's span.
  expect(gateway.attributes['app.correlation_id']).toBe(booking.headers.get('x-request-id'));
  // The gateway's proxied call, then consultation's handling under it.
  const proxied = inTrace(traceId).find(
    (span) => span.service === 'gateway' && span.kind === CLIENT && span.parentSpanId === gateway.spanId,
  );
  expect(proxied).toBeDefined();
  const consultation = await waitForSpan(
    'consultation server span',
    traceId,
    (span) => serverSpan('consultation')(span) && span.parentSpanId === proxied!.spanId,
  );
  // consultation → wallet: the hold, over fetch.
  const hold = await waitForSpan('wallet hold', traceId, serverSpan('wallet', '/internal/holds'));
  const holdCall = await waitForSpan('consultation’s hold call', traceId, (span) => span.spanId === hold.parentSpanId);
  expect(holdCall).toMatchObject({ service: 'consultation', kind: CLIENT });
  // The events, published from the outbox and handled in the same trace.
  const crmBooking = await waitForSpan('crm booking.confirmed', traceId, consumerSpan('crm', 'consultation.booking.confirmed'));
  const publishBooking = await expectPublishedBy(crmBooking, 'consultation');
  // One correlation id across the saga: the gateway's request id, on the publish and the handling.
  expect(publishBooking.attributes['app.correlation_id']).toBe(gateway.attributes['app.correlation_id']);
  expect(crmBooking.attributes['app.correlation_id']).toBe(gateway.attributes['app.correlation_id']);
  expect(publishBooking.attributes['app.outbox.swept']).toBe(false);
  const crmSession = await waitForSpan('crm session.completed', traceId, consumerSpan('crm', 'consultation.session.completed'));
  const reviewSession = await waitForSpan('review session.completed', traceId, consumerSpan('review', 'consultation.session.completed'));
  expect((await expectPublishedBy(reviewSession, 'consultation')).spanId).toBe(
    (await expectPublishedBy(crmSession, 'consultation')).spanId,
  );

  for (const span of [gateway, proxied!, consultation, hold, holdCall, crmBooking, publishBooking, crmSession, reviewSession])
    expectParentIn(traceId, root, span);
  // The services and the kinds of work the trace went through.
  expect(new Set(inTrace(traceId).map((span) => span.service))).toEqual(new Set(['gateway', 'consultation', 'wallet', 'crm', 'review']));
  // Database calls are in it too (the mongodb instrumentation).
  expect(
    inTrace(traceId).some(
      (span) => span.service === 'wallet' && String(span.attributes['db.system.name'] ?? span.attributes['db.system']).includes('mongo'),
    ),
  ).toBe(true);
}, 180_000);

test('an event left in the outbox by a producer killed while the broker was away is published after the restart in its request’s trace', async () => {
  const admin = await loginAdmin(system);
  const seller = await register(system, 'seller');
  const buyer = await fundedBuyer(system, 300);
  const offer = await offerConsultation(system, seller, admin);
  const slot = slotsOf(offer, dayFromNow(4))[2]!;
  const client = clientTrace();

  // The broker away for consultation alone: the booking is written with its event in the outbox.
  brokerLink.cut();
  const booked = await apiOf(system, buyer)('POST', '/consultations/bookings', bookingBody(offer, slot, buyer.email), client.headers);
  expect(booked.status).toBe(200);
  const written = await waitForSpan(
    'consultation server span',
    client.traceId,
    (span) => serverSpan('consultation')(span) && span.attributes['http.request.method'] === 'POST',
  );
  await system.processes.consultation.kill('SIGKILL');
  brokerLink.restore();
  await system.processes.consultation.start();

  const crm = await waitForSpan(
    'crm booking.confirmed after the restart',
    client.traceId,
    consumerSpan('crm', 'consultation.booking.confirmed'),
  );
  const publish = await expectPublishedBy(crm, 'consultation');
  expect(publish.attributes['app.outbox.swept']).toBe(true);
  // The publish span hangs under the request that wrote the event, and links to it.
  const parent = await waitForSpan('the request’s span', client.traceId, (span) => span.spanId === publish.parentSpanId);
  expect(parent).toMatchObject({ service: 'consultation' });
  expectParentIn(client.traceId, client.spanId, parent);
  expect(publish.links).toEqual([{ traceId: client.traceId, spanId: publish.parentSpanId }]);
  expect(written.traceId).toBe(client.traceId);
}, 120_000);
