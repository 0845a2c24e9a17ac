import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { makeEvent } from '@mkt/contracts';
import { connectAmqp } from '@mkt/infra';
import { apiOf, auditEvents, metric, register, report, waitFor, type Session } from './fixtures';
import { startSystem, type System } from './system';

// A consumer (the CRM) killed with SIGKILL in the middle of a stream of events, and poison
// messages: dead-lettered, the consumer going on, the dead letters listed and replayed.

let system: System;
beforeAll(async () => {
  system = await startSystem();
}, 90_000);
afterAll(() => system?.stop(), 60_000);

const root = join(__dirname, '..', '..');
type Audit = Awaited<ReturnType<typeof auditEvents>>;

function confirmed(seller: Session, buyer: Session, bookingId: string, amountMinor: number) {
  return makeEvent(
    'consultation.booking.confirmed',
    {
      bookingId,
      consultationId: 'con_e2e',
      sellerId: seller.id,
      buyerId: buyer.id,
      totalAmountMinor: amountMinor,
      currency: 'ETB',
      date: '2030-01-01',
      startTime: '09:00',
    },
    { source: 'consultation' },
  );
}

async function crmTotals(sellers: Session[]) {
  const rows = new Map<string, { totalBookings: number; totalSpent: number }>();
  for (const seller of sellers) {
    const res = await apiOf(system, seller)('GET', `/customers/seller/${seller.id}?limit=100`);
    // A failed read is kept in the result, so that a timeout says what the CRM answered.
    if (res.status !== 200) rows.set(`answer ${res.status} for ${seller.id}`, { totalBookings: NaN, totalSpent: NaN, ...res.body });
    for (const row of res.body.data?.customers ?? []) rows.set(`${seller.id}|${row.buyerId}`, row);
  }
  return rows;
}

const crmMetric = (name: string, labels: Record<string, string>) =>
  metric(system.processes.crm.url, name, { queue: `${system.namespace}.crm.bookings`, ...labels });

// SIGKILL: the messages in hand come back unacked. SIGTERM: the consumer stops taking messages,
// finishes (and acks) the ones in hand, and the process exits 0.
test.each(['SIGKILL', 'SIGTERM'] as const)(
  'the CRM stopped with %s mid-stream of 200 events and restarted ends with exact totals',
  async (signal) => {
    const sellers = await Promise.all([register(system, 'seller'), register(system, 'seller')]);
    const buyers = await Promise.all([0, 1, 2, 3, 4].map(() => register(system, 'buyer')));
    const audit: Audit = await auditEvents(system, { keys: ['consultation.#'] });
    const events = [];
    const expected = new Map<string, { totalBookings: number; totalSpent: number }>();
    const bookings: Array<{ id: string; seller: Session; buyer: Session; amountMinor: number }> = [];
    for (let i = 0; i < 180; i += 1) {
      const seller = sellers[i % 2]!;
      const buyer = buyers[i % 5]!;
      const booking = { id: `bk_e2e_${i}_${randomUUID().slice(0, 8)}`, seller, buyer, amountMinor: 1_000 + i };
      bookings.push(booking);
      events.push(confirmed(seller, buyer, booking.id, booking.amountMinor));
      const row = expected.get(`${seller.id}|${buyer.id}`) ?? { totalBookings: 0, totalSpent: 0 };
      row.totalBookings += 1;
      row.totalSpent += booking.amountMinor;
      expected.set(`${seller.id}|${buyer.id}`, row);
      if (i >= 20 && i < 40) {
        const cancelled = bookings[i - 20]!;
        events.push(
          makeEvent(
            'consultation.booking.cancelled',
            { bookingId: cancelled.id, sellerId: cancelled.seller.id, buyerId: cancelled.buyer.id, refundAmountMinor: 500 },
            { source: 'consultation' },
          ),
        );
        const pair = expected.get(`${cancelled.seller.id}|${cancelled.buyer.id}`)!;
        pair.totalBookings -= 1;
        pair.totalSpent -= 500;
      }
    }
    expect(events).toHaveLength(200);
    const ackedBase = await crmMetric('marketplace_events_consumed_total', { outcome: 'acked' });
    await audit.publishAll(events.slice(0, 100));
    const ackedBeforeKill =
      (await waitFor(
        'the CRM to be part-way through the stream',
        () => crmMetric('marketplace_events_consumed_total', { outcome: 'acked' }),
        (acked) => acked >= ackedBase + 10,
      )) - ackedBase;
    expect(await system.processes.crm.kill(signal)).toBe(signal === 'SIGKILL' ? 'SIGKILL' : 0);
    await audit.publishAll(events.slice(100));
    await system.processes.crm.start();

    const toMajor = (rows: Map<string, { totalBookings: number; totalSpent: number }>) =>
      new Map([...rows].map(([key, row]) => [key, { totalBookings: row.totalBookings, totalSpent: row.totalSpent / 100 }]));
    const want = toMajor(expected);
    const exact = (rows: Map<string, { totalBookings: number; totalSpent: number }>) =>
      [...want].every(([key, row]) => rows.get(key)?.totalBookings === row.totalBookings && rows.get(key)?.totalSpent === row.totalSpent);
    const rows = await waitFor('exact totals after the restart', () => crmTotals(sellers), exact, 60_000);
    const applied = [...rows.values()].reduce((sum, row) => sum + row.totalBookings, 0);
    const wanted = [...want.values()].reduce((sum, row) => sum + row.totalBookings, 0);
    report(`CRM ${signal} mid-stream`, {
      sent: events.length,
      ackedBeforeKill,
      appliedBookings: applied,
      expectedBookings: wanted,
      lost: Math.max(0, wanted - applied),
      duplicated: Math.max(0, applied - wanted),
    });
    expect(Object.fromEntries(rows)).toMatchObject(Object.fromEntries(want));
    await audit.close();
  },
  180_000,
);

function dlq(...args: string[]): Promise<{ queue: string; total: number; messages?: unknown[]; replayed?: unknown[] }> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [join(root, 'scripts', 'dlq.mjs'), ...args, '--json'],
      { env: { ...process.env, AMQP_URL: system.amqpUrl, BUS_NAMESPACE: system.namespace } },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    ),
  );
}

test('poison messages are dead-lettered, the consumer goes on, and `npm run dlq` lists and replays dead letters', async () => {
  const seller = await register(system, 'seller');
  const buyer = await register(system, 'buyer');
  const audit: Audit = await auditEvents(system, { keys: ['nothing.to.audit'] });
  const deadBefore = await crmMetric('marketplace_dead_lettered_total', {});

  await audit.publish('consultation.booking.confirmed', Buffer.from('{ this is not json'), 'poison-not-json');
  const badData = confirmed(seller, buyer, 'bk_bad', 100);
  await audit.publish(
    badData.type,
    Buffer.from(JSON.stringify({ ...badData, data: { ...badData.data, totalAmountMinor: -5 } })),
    'poison-bad-data',
  );
  const good = confirmed(seller, buyer, `bk_good_${randomUUID().slice(0, 8)}`, 250_00);
  await audit.publish(good.type, Buffer.from(JSON.stringify(good)), good.id);

  await waitFor(
    'both poison messages dead-lettered',
    () => crmMetric('marketplace_dead_lettered_total', {}),
    (n) => n >= deadBefore + 2,
  );
  const afterPoison = await waitFor(
    'the good event after the poison applied',
    () => crmTotals([seller]),
    (rows) => rows.get(`${seller.id}|${buyer.id}`)?.totalSpent === 250,
  );
  expect(afterPoison.get(`${seller.id}|${buyer.id}`)).toMatchObject({ totalBookings: 1, totalSpent: 250 });

  const listed = await dlq('list', 'crm.bookings');
  expect(listed.queue).toBe(`${system.namespace}.crm.bookings.dlq`);
  expect(listed.total).toBe(2);
  expect(listed.messages).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ messageId: 'poison-not-json', error: expect.stringContaining('not JSON') }),
      expect.objectContaining({ messageId: 'poison-bad-data', error: expect.stringContaining('Bad data') }),
    ]),
  );
  expect((await dlq('list', 'crm.bookings.dlq')).total).toBe(2);

  // A good event dead-lettered in the past (say, by a bug since fixed) is replayed on its own.
  const stranded = confirmed(seller, buyer, `bk_stranded_${randomUUID().slice(0, 8)}`, 100_00);
  const connection = await connectAmqp(system.amqpUrl);
  const channel = await connection.createConfirmChannel();
  channel.sendToQueue(`${system.namespace}.crm.bookings.dlq`, Buffer.from(JSON.stringify(stranded)), {
    persistent: true,
    messageId: stranded.id,
    headers: { 'x-error': 'simulated: the database was down', 'x-attempt': 3, 'x-original-routing-key': stranded.type },
  });
  await channel.waitForConfirms();
  await connection.close();
  expect((await dlq('list', 'crm.bookings')).total).toBe(3);

  const one = await dlq('replay', 'crm.bookings', '--id', stranded.id);
  expect(one.replayed).toEqual([expect.objectContaining({ messageId: stranded.id })]);
  const replayedRows = await waitFor(
    'the replayed event applied',
    () => crmTotals([seller]),
    (rows) => rows.get(`${seller.id}|${buyer.id}`)?.totalSpent === 350,
  );
  expect(replayedRows.get(`${seller.id}|${buyer.id}`)).toMatchObject({ totalBookings: 2, totalSpent: 350 });
  expect((await dlq('list', 'crm.bookings')).total).toBe(2);

  // Replaying poison sends it round once more: dead-lettered again, nothing else changes.
  const deadBeforeReplay = await crmMetric('marketplace_dead_lettered_total', {});
  const all = await dlq('replay', 'crm.bookings');
  expect(all.replayed).toHaveLength(2);
  await waitFor(
    'the poison dead-lettered again',
    () => crmMetric('marketplace_dead_lettered_total', {}),
    (n) => n >= deadBeforeReplay + 2,
  );
  expect((await dlq('list', 'crm.bookings')).total).toBe(2);
  const final = (await crmTotals([seller])).get(`${seller.id}|${buyer.id}`)!;
  expect(final).toMatchObject({ totalBookings: 2, totalSpent: 350 });
  report('poison and DLQ', {
    poisonSent: 2,
    deadLettered: (await crmMetric('marketplace_dead_lettered_total', {})) - deadBefore,
    goodApplied: 1,
    replayedGood: 1,
    appliedBookings: final.totalBookings,
    lost: Math.max(0, 2 - final.totalBookings),
    duplicated: Math.max(0, final.totalBookings - 2),
  });
  await audit.close();
}, 120_000);
