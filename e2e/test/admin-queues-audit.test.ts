import {
  apiOf,
  auditEntriesOf,
  book,
  dayFromNow,
  fund,
  offerConsultation,
  register,
  slotsOf,
  systemWithAdmin,
  topUp,
  waitFor,
  type AuditEntry,
  type Session,
} from './fixtures';
import type { System } from './system';

// The admins' queues and the audit log of their actions, through the gateway against every
// service: each queue lists what waits and drops it once handled, with its counts; every admin
// action writes exactly one entry (a retried one too), a refused one none; the log reads with
// filters and a cursor, exports as CSV, and only admins see any of it.
let system: System;
let admin: Session;
systemWithAdmin((started) => ({ system, admin } = started));

const adminApi = () => apiOf(system, admin);

const entriesOf = (targetId: string, count: number) => auditEntriesOf(system, admin, targetId, count);

test('payouts: the queue shows what waits with the four-eyes rule, drops it once handled; every move is one entry, a retry or a refused move none', async () => {
  const seller = await register(system, 'seller');
  const buyer = await register(system, 'buyer');
  await topUp(system, seller, 500);
  const requested = await apiOf(system, seller)('POST', `/wallets/users/${seller.ref}/payout-request`, {
    amount: '150.00',
    bankCode: 'CBE',
    accountNumber: '1000123456789',
    accountName: 'A seller',
    reason: 'Monthly withdrawal',
  });
  expect(requested.status).toBe(200);
  const ref: string = requested.body.data.referenceId;
  const queue = async (query = '') => (await adminApi()('GET', `/wallets/admin/payout-requests?userId=${seller.id}${query}`)).body;

  const waiting = await queue();
  expect(waiting.data.counts).toEqual({ Pending: 1, Approved: 0, Processing: 0 });
  expect(waiting.pagination).toMatchObject({ page: 1, total: 1 });
  expect(waiting.data.items).toEqual([
    expect.objectContaining({
      referenceId: ref,
      status: 'Pending',
      requestedAmount: '150.00',
      requestedBy: seller.id,
      reviewedBy: [],
      nextMoves: ['approve', 'reject'],
      mayAct: true,
      blockedBecause: null,
    }),
  ]);
  // Admins only, before anything is read.
  expect((await apiOf(system, buyer)('GET', '/wallets/admin/payout-requests')).status).toBe(403);
  expect((await apiOf(system, seller)('GET', '/wallets/admin/payout-requests')).status).toBe(403);
  expect((await apiOf(system)('GET', '/wallets/admin/payout-requests')).status).toBe(401);

  // A refused move (not an admin) writes nothing.
  expect((await apiOf(system, seller)('POST', `/wallets/payout-requests/${ref}/approve`, {})).status).toBe(403);
  const requestId = `audit-approve-${Date.now()}`;
  const approve = () =>
    adminApi()('POST', `/wallets/payout-requests/${ref}/approve`, { adminNotes: 'Account checked' }, { 'x-request-id': requestId });
  expect((await approve()).status).toBe(200);
  // The same request again (a client's retry): refused by the state, nothing recorded twice.
  expect((await approve()).status).toBe(409);

  const approved = await queue();
  expect(approved.data.counts).toEqual({ Pending: 0, Approved: 1, Processing: 0 });
  expect(approved.data.items[0]).toMatchObject({
    status: 'Approved',
    reviewedBy: [{ userId: admin.id, action: 'approve' }],
    nextMoves: ['process'],
    mayAct: true,
  });
  expect((await queue('&status=Pending')).data.items).toEqual([]);

  expect((await adminApi()('POST', `/wallets/payout-requests/${ref}/process`, {})).status).toBe(200);
  expect((await adminApi()('POST', `/wallets/payout-requests/${ref}/complete`, {})).status).toBe(200);
  // A move the state refuses: no entry.
  expect((await adminApi()('POST', `/wallets/payout-requests/${ref}/fail`, {})).status).toBe(409);
  const done = await queue();
  expect(done.data.counts).toEqual({ Pending: 0, Approved: 0, Processing: 0 });
  expect(done.data.items).toEqual([]);

  const entries = await entriesOf(ref, 3);
  expect(entries.map((entry) => entry.action)).toEqual(['payout.complete', 'payout.process', 'payout.approve']);
  expect(entries[2]).toMatchObject({
    actorId: admin.id,
    targetId: ref,
    service: 'wallet',
    requestId,
    before: { status: 'Pending' },
    after: { status: 'Approved', adminNotes: 'Account checked' },
    notes: 'Account checked',
  });
  expect(entries[2]!.clientAddress).toMatch(/^[\d.:a-f]+$/);
});

test('an admin’s own payout waits for another admin: listed, but not theirs to move', async () => {
  await topUp(system, admin, 200);
  const requested = await adminApi()('POST', `/wallets/users/${admin.ref}/payout-request`, {
    amount: '50.00',
    bankCode: 'CBE',
    accountNumber: '1000123456789',
    accountName: 'The admin',
    reason: 'Own withdrawal',
  });
  expect(requested.status).toBe(200);
  const ref: string = requested.body.data.referenceId;
  const listed = (await adminApi()('GET', `/wallets/admin/payout-requests?userId=${admin.id}&status=Pending`)).body.data.items;
  expect(listed).toEqual([
    expect.objectContaining({ referenceId: ref, mayAct: false, blockedBecause: 'Another admin must move a payout you requested' }),
  ]);
  expect((await adminApi()('POST', `/wallets/payout-requests/${ref}/approve`, {})).status).toBe(403);
  expect(await entriesOf(ref, 0)).toEqual([]);
});

test('consultations: a new one and a revision wait in the approval queue until approved; each approval is one entry with before and after', async () => {
  const seller = await register(system, 'seller');
  const api = apiOf(system, seller);
  const ruleSet = await api('POST', '/consultations/availability-rule-sets/rule-sets', {
    name: 'Mornings',
    timezone: 'Africa/Addis_Ababa',
    availabilityRules: [
      { type: 'weekly', weekday: 'monday', intervals: [{ start_time: '09:00:00', end_time: '12:00:00', enabled: true }] },
    ],
  });
  const pricing = await api('POST', '/consultations/pricing', { basePrice: 100, currency: 'ETB' });
  const created = await api('POST', '/consultations', {
    title: 'Plan review',
    duration: 60,
    sessionType: 'OneToOne',
    maxCapacity: 1,
    deliveryMode: 'Online',
    timezone: 'Africa/Addis_Ababa',
    language: 'English',
    category: 'Business',
    ruleSetId: ruleSet.body.data.id,
    pricingId: pricing.body.data.id,
  });
  expect(created.status).toBe(200);
  const id: string = created.body.data.id;
  const queue = async (query = '') => (await adminApi()('GET', `/consultations/admin/approvals?sellerId=${seller.id}${query}`)).body;

  const waiting = await queue();
  expect(waiting.data.counts).toEqual({ consultations: 1, revisions: 0 });
  expect(waiting.data.items).toEqual([
    expect.objectContaining({
      kind: 'consultation',
      consultationId: id,
      title: 'Plan review',
      version: 1,
      revisionId: null,
      changes: null,
    }),
  ]);
  expect((await apiOf(system, seller)('GET', '/consultations/admin/approvals')).status).toBe(403);

  const approve = () => adminApi()('POST', `/consultations/${id}/approve`, { version: 1 });
  expect((await approve()).status).toBe(200);
  expect((await approve()).status).toBe(409); // retried: already approved, nothing recorded
  expect((await queue()).data).toEqual({ counts: { consultations: 0, revisions: 0 }, items: [] });

  expect((await api('PUT', `/consultations/${id}`, { title: 'Plan review, revised' })).status).toBe(200);
  const revised = await queue('&kind=revision');
  expect(revised.data.counts).toEqual({ consultations: 0, revisions: 1 });
  const item = revised.data.items[0];
  expect(item).toMatchObject({ kind: 'revision', consultationId: id, changes: { title: 'Plan review, revised' } });
  expect((await queue('&kind=consultation')).data.items).toEqual([]);
  expect((await adminApi()('POST', `/consultations/${id}/approve`, { revisionId: item.revisionId })).status).toBe(200);
  expect((await queue()).data.items).toEqual([]);

  const entries = await entriesOf(id, 2);
  expect(entries.map((entry) => entry.action)).toEqual(['consultation.approve_revision', 'consultation.approve']);
  expect(entries[1]).toMatchObject({
    service: 'consultation',
    actorId: admin.id,
    before: { currentStatus: 'Pending', visibility: 'Hidden', version: 1 },
    after: { currentStatus: 'Approved', visibility: 'Published', version: 2 },
  });
  expect(entries[0]).toMatchObject({
    before: { title: 'Plan review', revisionId: item.revisionId },
    after: { title: 'Plan review, revised' },
  });
});

test('a hold voided by an admin is one entry (a retried void is refused and records nothing)', async () => {
  const [seller, buyer] = await Promise.all([register(system, 'seller'), register(system, 'buyer')]);
  await fund(system, [buyer], 300);
  const offer = await offerConsultation(system, seller, admin, { priceMajor: 100 });
  const booked = await book(system, buyer, offer, slotsOf(offer, dayFromNow(3))[0]!);
  expect(booked.status).toBe(200);
  const bookingId: string = booked.body.data.bookingId;
  const voidIt = () => adminApi()('POST', `/wallets/booking-holds/${bookingId}/void`, { reason: 'Never took place' });
  expect((await apiOf(system, seller)('POST', `/wallets/booking-holds/${bookingId}/void`, { reason: 'x' })).status).toBe(403);
  expect((await voidIt()).status).toBe(200);
  expect((await voidIt()).status).toBe(409);
  const [entry, ...more] = await entriesOf(bookingId, 1);
  expect(more).toEqual([]);
  expect(entry).toMatchObject({
    action: 'booking_hold.void',
    service: 'wallet',
    notes: 'Never took place',
    before: { status: 'Held', settlement: null },
    after: { settlement: 'void', refundMinor: 100_00 },
  });
  // The hold queue is admins' only.
  expect((await apiOf(system, buyer)('GET', '/wallets/admin/booking-holds')).status).toBe(403);
  const holds = await adminApi()('GET', '/wallets/admin/booking-holds');
  expect(holds.status).toBe(200);
  expect(holds.body.data.items.map((h: { bookingId: string }) => h.bookingId)).not.toContain(bookingId);
});

test('the log: filters, a cursor through every page, the CSV export; admins only', async () => {
  const since = new Date(Date.now() - 1).toISOString();
  const seller = await register(system, 'seller');
  await topUp(system, seller, 300);
  const refs: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const requested = await apiOf(system, seller)('POST', `/wallets/users/${seller.ref}/payout-request`, {
      amount: '10.00',
      bankCode: 'CBE',
      accountNumber: '1000123456789',
      accountName: 'A seller',
      reason: `Payout ${i}`,
    });
    refs.push(requested.body.data.referenceId);
    expect((await adminApi()('POST', `/wallets/payout-requests/${refs[i]}/reject`, { adminNotes: `No, "${i}", =sum` })).status).toBe(200);
  }
  const filter = `actorId=${admin.id}&action=payout.reject&from=${encodeURIComponent(since)}`;
  await waitFor(
    'three rejections in the log',
    async () => (await adminApi()('GET', `/v1/admin/audit-log?${filter}`)).body.data.entries,
    (entries: AuditEntry[]) => entries.length === 3,
  );

  // Page by page, one entry each, newest first: every entry once.
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { data: { entries: AuditEntry[]; nextCursor: string | null } } } = await adminApi()(
      'GET',
      `/v1/admin/audit-log?${filter}&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
    );
    seen.push(...page.body.data.entries.map((entry) => entry.targetId));
    cursor = page.body.data.nextCursor;
  } while (cursor);
  expect(seen).toEqual([...refs].reverse());
  // A range that ended before them, and a target filter.
  expect((await adminApi()('GET', `/v1/admin/audit-log?targetId=${refs[0]}&to=${encodeURIComponent(since)}`)).body.data.entries).toEqual(
    [],
  );
  // A range that ends where it starts is refused, not answered empty.
  expect((await adminApi()('GET', `/v1/admin/audit-log?${filter}&to=${encodeURIComponent(since)}`)).status).toBe(422);
  expect((await adminApi()('GET', `/v1/admin/audit-log?targetType=payout&targetId=${refs[1]}`)).body.data.entries).toHaveLength(1);
  // Bad input: the error envelope.
  expect((await adminApi()('GET', '/v1/admin/audit-log?cursor=bm90LWEtY3Vyc29y')).status).toBe(422);
  expect((await adminApi()('GET', '/v1/admin/audit-log?action=payout.explode')).status).toBe(400);

  const csv = await fetch(`${system.gateway}/v1/admin/audit-log/export?${filter}`, { headers: { authorization: `Bearer ${admin.token}` } });
  expect(csv.status).toBe(200);
  expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
  const lines = (await csv.text()).split('\r\n').filter(Boolean);
  expect(lines[0]).toBe('id,at,action,actorId,actorRole,targetType,targetId,service,requestId,clientAddress,notes,before,after');
  expect(lines).toHaveLength(4);
  expect(lines[1]).toContain(refs[2]);
  // A field with a comma or a quote is quoted, its quotes doubled.
  expect(lines[1]).toContain(`"No, ""2"", =sum"`);

  for (const session of [seller, await register(system, 'buyer')]) {
    expect((await apiOf(system, session)('GET', '/v1/admin/audit-log')).status).toBe(403);
    expect((await apiOf(system, session)('GET', '/v1/admin/audit-log/export')).status).toBe(403);
  }
  expect((await apiOf(system)('GET', '/v1/admin/audit-log')).status).toBe(401);
});
