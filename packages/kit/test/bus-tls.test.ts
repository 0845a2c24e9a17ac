import { readFileSync } from 'node:fs';
import amqp from 'amqplib';
import pino from 'pino';
import { makeEvent, type IntegrationEvent } from '@mkt/contracts';
import { Bus } from '@mkt/kit/bus';
import { makeTestCertificates, startTlsBroker, testEnv, uniqueName, waitFor, type BrokerHandle, type TestCertificates } from '@mkt/infra';

// A RabbitMQ node of this file's own with a TLS listener (certificates made here with openssl):
// kit's bus connects over TLS verifying the broker's certificate against AMQP_TLS_CA_FILE, and a
// certificate its CA did not sign is refused.
const logged: Array<{ msg?: string; err?: { message?: string } }> = [];
const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });

let certs: TestCertificates;
let broker: BrokerHandle;
let tlsUrl: string;

beforeAll(async () => {
  certs = await makeTestCertificates();
  broker = await startTlsBroker(certs);
  tlsUrl = broker.tlsUrl!;
}, 180_000);

afterAll(async () => {
  await broker?.stop();
  certs?.remove();
}, 60_000);

function reviewEvent(entityId: string) {
  return makeEvent(
    'review.created',
    { reviewId: uniqueName('rev'), entityType: 'consultation_service', entityId, rating: 5 },
    { source: 'review' },
  );
}

test("with the CA of the broker's certificate, the bus connects over TLS, publishes and consumes an event", async () => {
  const env = testEnv('kit_bus_tls');
  const bus = new Bus({ url: tlsUrl, log, namespace: env.namespace, tlsCaFile: certs.caFile });
  const received: Array<IntegrationEvent<'review.created'>> = [];
  try {
    await bus.consume({
      subscription: { queue: uniqueName('kit.tls'), events: ['review.created'] },
      handlers: { 'review.created': async (event) => void received.push(event) },
    });
    await bus.start(15_000);
    const event = reviewEvent('over-tls');
    await bus.publish(event);
    await waitFor(async () => received.length === 1, { what: 'the event over TLS', timeoutMs: 15_000, intervalMs: 100 });
    expect(received[0]!.id).toBe(event.id);
  } finally {
    await bus.close();
  }
}, 60_000);

test('a broker certificate the configured CA did not sign is refused: the bus never connects', async () => {
  logged.length = 0;
  const bus = new Bus({
    url: tlsUrl,
    log,
    namespace: testEnv('kit_bus_tls_wrong').namespace,
    tlsCaFile: certs.otherCaFile,
    maxReconnectDelayMs: 200,
  });
  try {
    await expect(bus.start(3_000)).rejects.toThrow('not connected within 3000 ms');
    expect(bus.isConnected()).toBe(false);
  } finally {
    await bus.close();
  }
  // Why, in its log: the certificate check, not a network failure.
  expect(logged.some((line) => /certificate/i.test(line.err?.message ?? ''))).toBe(true);
  // The same handshake, bare: the TLS layer refuses the broker's certificate.
  await expect(amqp.connect(tlsUrl, { ca: [readFileSync(certs.otherCaFile)], timeout: 5_000 })).rejects.toThrow(/certificate/i);
}, 30_000);

test('without a CA file an amqps:// URL verifies against the system CAs, which do not know the test CA: refused', async () => {
  await expect(amqp.connect(tlsUrl, { timeout: 5_000 })).rejects.toThrow(/certificate/i);
}, 30_000);

test('a CA file with a plain amqp:// URL, or a CA file that cannot be read, stops the start with a clear error', () => {
  expect(() => new Bus({ url: broker.url, log, tlsCaFile: certs.caFile })).toThrow('AMQP_TLS_CA_FILE is set but AMQP_URL is not amqps://');
  expect(() => new Bus({ url: tlsUrl, log, tlsCaFile: '/nonexistent/ca.crt' })).toThrow(
    'AMQP_TLS_CA_FILE: cannot read the CA file /nonexistent/ca.crt (ENOENT)',
  );
  expect(() => new Bus({ url: tlsUrl, log, tlsCaFile: certs.keyFile })).toThrow(
    `AMQP_TLS_CA_FILE: ${certs.keyFile} holds no PEM certificate`,
  );
});
