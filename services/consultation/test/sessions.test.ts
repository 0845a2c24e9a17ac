import { moveTime } from '../src/domain/sessions';
import { admin, as, bookingBody, givenOffer, listenFor, newUser, useConsultationApp, models } from './harness';

const app = useConsultationApp();

/**
 * A booked session; `startsInMs` moves its slot that far from now (bookings are only taken for
 * future slots, so a session that is due is made by moving its slot, as time would).
 */
async function bookedSession(startsInMs?: number) {
  const offer = await givenOffer(app);
  const buyer = newUser();
  const booking = await as(app, buyer)('POST', '/consultations/bookings', bookingBody(offer));
  const sessionId = booking.body.data.sessionId as string;
  let startsAt: Date | undefined;
  if (startsInMs !== undefined) {
    startsAt = new Date(Date.now() + startsInMs);
    await models().Session.updateOne({ _id: sessionId }, { $set: { startsAt, endsAt: new Date(startsAt.getTime() + 3_600_000) } });
  }
  return { offer, buyer, sessionId, seller: as(app, offer.seller), startsAt };
}
const iso = (date: Date, plusMinutes = 0) => new Date(date.getTime() + plusMinutes * 60_000).toISOString();

describe('sessions', () => {
  test('start → end: In Progress, then Completed with its duration, announced once', async () => {
    const events = await listenFor(['consultation.session.completed']);
    const { offer, buyer, sessionId, seller, startsAt } = await bookedSession(-60 * 60_000);
    const started = await seller('POST', `/consultations/sessions/${sessionId}/start`, {
      actualStartTime: iso(startsAt!),
      notes: 'on time',
    });
    expect(started.body.data).toEqual({ sessionId, status: 'In Progress', startedAt: iso(startsAt!) });
    const ended = await seller('POST', `/consultations/sessions/${sessionId}/end`, {
      actualEndTime: iso(startsAt!, 55),
      sessionSummary: 'CV reviewed',
      nextSteps: 'Apply',
    });
    expect(ended.body.data).toEqual({ sessionId, status: 'Completed', endedAt: iso(startsAt!, 55), duration: 55 });
    const event = await events.waitFor((e) => e.data.sessionId === sessionId);
    expect(event.data).toEqual({
      sessionId,
      consultationId: offer.consultationId,
      consultationReferenceId: offer.referenceId,
      sellerId: offer.seller.id,
      buyerIds: [buyer.id],
      bookingIds: [expect.stringMatching(/^bk_/)],
      paidBuyerIds: [buyer.id],
      payments: [{ bookingId: expect.stringMatching(/^bk_/), buyerId: buyer.id, paidMinor: 500_00, listMinor: 500_00 }],
      endedAt: iso(startsAt!, 55),
    });
    await events.settle();
    expect(events.seen.filter((e) => e.data.sessionId === sessionId)).toHaveLength(1);
    await events.close();
    const listed = await as(app, buyer)('GET', '/consultations/sessions?status=Completed');
    expect(listed.body.data.sessions.map((s: { id: string }) => s.id)).toEqual([sessionId]);
  });

  test('moves outside the table are 409', async () => {
    const { sessionId, seller } = await bookedSession(5 * 60_000);
    expect((await seller('POST', `/consultations/sessions/${sessionId}/end`, {})).status).toBe(409);
    await seller('POST', `/consultations/sessions/${sessionId}/start`, {});
    expect((await seller('POST', `/consultations/sessions/${sessionId}/start`, {})).status).toBe(409);
    expect((await seller('POST', `/consultations/sessions/${sessionId}/no-show`, {})).status).toBe(409);
    // An end waits for the slot to start: time passes.
    await models().Session.updateOne({ _id: sessionId }, { $set: { startsAt: new Date(Date.now() - 60_000) } });
    expect((await seller('POST', `/consultations/sessions/${sessionId}/end`, {})).status).toBe(200);
    for (const move of ['start', 'end', 'no-show'])
      expect((await seller('POST', `/consultations/sessions/${sessionId}/${move}`, {})).status).toBe(409);
  });

  test('no-show: Scheduled → No Show once the slot’s grace has passed, announced', async () => {
    const events = await listenFor(['consultation.session.no_show']);
    const { buyer, sessionId, seller } = await bookedSession();
    expect((await seller('POST', `/consultations/sessions/${sessionId}/no-show`, {})).status).toBe(422);
    await models().Session.updateOne(
      { _id: sessionId },
      { $set: { startsAt: new Date(Date.now() - 3_600_000), endsAt: new Date(Date.now() - 60_000) } },
    );
    const marked = await seller('POST', `/consultations/sessions/${sessionId}/no-show`, {
      notes: 'no answer',
      attemptedContact: true,
      contactMethod: 'phone',
    });
    expect(marked.body.data).toMatchObject({ sessionId, status: 'No Show' });
    expect(Date.parse(marked.body.data.markedAt)).not.toBeNaN();
    expect((await events.waitFor((e) => e.data.sessionId === sessionId)).data).toMatchObject({ buyerIds: [buyer.id] });
    await events.close();
    expect((await seller('POST', `/consultations/sessions/${sessionId}/start`, {})).status).toBe(409);
  });

  test('only the session’s seller (or an admin) moves it', async () => {
    const { buyer, sessionId } = await bookedSession(5 * 60_000);
    expect((await as(app, buyer)('POST', `/consultations/sessions/${sessionId}/start`, {})).status).toBe(403);
    expect((await as(app, newUser('seller'))('POST', `/consultations/sessions/${sessionId}/start`, {})).status).toBe(403);
    expect((await as(app, admin)('POST', `/consultations/sessions/${sessionId}/start`, {})).status).toBe(200);
    expect((await as(app, admin)('POST', '/consultations/sessions/ses_unknown/start', {})).status).toBe(404);
  });

  test('a session everyone left cannot start', async () => {
    const { buyer, sessionId, seller, offer } = await bookedSession();
    const bookings = await as(app, buyer)('GET', '/consultations/bookings');
    await as(app, buyer)('POST', '/consultations/bookings/cancel', { bookingId: bookings.body.data.bookings[0].id });
    const slot = (await models().Session.findById(sessionId).lean())!.startsAt;
    await models().Session.updateOne({ _id: sessionId }, { $set: { startsAt: new Date(Date.now() + 5 * 60_000) } });
    expect((await seller('POST', `/consultations/sessions/${sessionId}/start`, {})).status).toBe(409);
    await models().Session.updateOne({ _id: sessionId }, { $set: { startsAt: slot } });
    const again = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer));
    expect(again.body.data.sessionId).toBe(sessionId);
  });
});

describe('session times (a completed session makes its buyers eligible to review)', () => {
  test('a session cannot start more than 15 minutes before its slot, whatever time the seller claims', async () => {
    const { sessionId, seller } = await bookedSession(2 * 86_400_000);
    const early = await seller('POST', `/consultations/sessions/${sessionId}/start`, {});
    expect(early.status).toBe(422);
    expect(early.body.errors[0]).toMatchObject({ code: 'too_early' });
    const backdated = await seller('POST', `/consultations/sessions/${sessionId}/start`, {
      actualStartTime: iso(new Date(), -2 * 24 * 60),
    });
    expect(backdated.status).toBe(422);
    expect((await models().Session.findById(sessionId).lean())!.status).toBe('Scheduled');
  });

  test('from 15 minutes before the slot it starts; a start time before that window or in the future is 422', async () => {
    const { sessionId, seller, startsAt } = await bookedSession(14 * 60_000);
    for (const actualStartTime of [iso(startsAt!, -16), iso(new Date(), 10)]) {
      const res = await seller('POST', `/consultations/sessions/${sessionId}/start`, { actualStartTime });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ path: 'actualStartTime', code: 'invalid' });
      expect((await models().Session.findById(sessionId).lean())!.status).toBe('Scheduled');
    }
    // Not a date-time at all: against the schema, 400.
    const malformed = await seller('POST', `/consultations/sessions/${sessionId}/start`, { actualStartTime: 'soon' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0]).toMatchObject({ path: 'actualStartTime', code: 'invalid' });
    expect((await models().Session.findById(sessionId).lean())!.status).toBe('Scheduled');
    const started = await seller('POST', `/consultations/sessions/${sessionId}/start`, {});
    expect(started.body.data.status).toBe('In Progress');
  });

  test('an end before (or at) the start, or in the future, is 422 and the session stays In Progress', async () => {
    const { sessionId, seller, startsAt } = await bookedSession(-30 * 60_000);
    await seller('POST', `/consultations/sessions/${sessionId}/start`, { actualStartTime: iso(startsAt!) });
    for (const actualEndTime of [iso(startsAt!, -1), iso(startsAt!), iso(new Date(), 10)]) {
      const res = await seller('POST', `/consultations/sessions/${sessionId}/end`, { actualEndTime });
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ path: 'actualEndTime', code: 'invalid' });
    }
    expect((await models().Session.findById(sessionId).lean())!.status).toBe('In Progress');
    const ended = await seller('POST', `/consultations/sessions/${sessionId}/end`, {});
    expect(ended.body.data).toMatchObject({ status: 'Completed', duration: 30 });
  });
});

describe('moveTime (the rule alone)', () => {
  const now = new Date('2030-03-01T12:00:00.000Z');
  const slot = { startsAt: new Date('2030-03-03T12:00:00.000Z'), startedAt: null };
  test('the lead is configurable: a system that books days ahead may start sessions that far ahead', () => {
    expect(() => moveTime('start', slot, undefined, now)).toThrow(/15 minutes before its slot/);
    expect(moveTime('start', slot, undefined, now, 3 * 86_400_000)).toEqual(now);
    expect(() => moveTime('start', slot, '2030-02-27T12:00:00.000Z', now, 3 * 86_400_000)).toThrow(/actualStartTime/);
  });
});

describe('visibility', () => {
  test('the default active rule set in its window decides by priority; no match or none: approved ones show', async () => {
    const offer = await givenOffer(app);
    const hidden = await givenOffer(app, { approve: false });
    const status = (context: object, ids = [offer.consultationId]) =>
      as(app, newUser())('POST', '/consultations/visibility/status', { consultationIds: ids, context });
    const before = await status({ userType: 'guest' }, [offer.consultationId, hidden.consultationId, 'con_missing']);
    expect(before.body.data.consultations).toEqual([
      { consultationId: offer.consultationId, visible: true, reason: 'Approved and published; no visibility rule set in force' },
      { consultationId: hidden.consultationId, visible: false, reason: 'No such consultation' },
      { consultationId: 'con_missing', visible: false, reason: 'No such consultation' },
    ]);
    const toItsSeller = await as(app, hidden.seller)('POST', '/consultations/visibility/status', {
      consultationIds: [hidden.consultationId],
    });
    expect(toItsSeller.body.data.consultations).toEqual([
      { consultationId: hidden.consultationId, visible: false, reason: 'Not approved and published' },
    ]);
    const created = await as(app, offer.seller)('POST', '/consultations/visibility/rule-sets', {
      name: 'Members first',
      description: '',
      isDefault: true,
      isActive: true,
      validFrom: new Date(Date.now() - 60_000).toISOString(),
      validTo: new Date(Date.now() + 86_400_000).toISOString(),
      visibilityRules: [
        { type: 'user_type', condition: 'guest', action: 'hide', priority: 2 },
        { type: 'location', condition: 'ET, KE', action: 'show', priority: 1 },
      ],
    });
    expect(created.body.data).toMatchObject({ name: 'Members first', isActive: true });
    expect(created.body.data.referenceId).toMatch(/^VRS_[A-Z0-9]{8}$/);
    expect((await status({ userType: 'guest', location: 'et' })).body.data.consultations[0]).toMatchObject({
      visible: true,
      reason: expect.stringContaining('location ET, KE'),
    });
    expect((await status({ userType: 'guest', location: 'US' })).body.data.consultations[0]).toMatchObject({
      visible: false,
      reason: expect.stringContaining('user_type guest'),
    });
    expect((await status({ userType: 'buyer' })).body.data.consultations[0]).toMatchObject({
      visible: true,
      reason: 'No rule of "Members first" matched',
    });
  });

  test('a rule set outside its window or inactive is not in force; bad bodies are 400', async () => {
    const offer = await givenOffer(app);
    await as(app, offer.seller)('POST', '/consultations/visibility/rule-sets', {
      name: 'Old',
      isDefault: true,
      isActive: true,
      validFrom: '2020-01-01T00:00:00Z',
      validTo: '2020-02-01T00:00:00Z',
      visibilityRules: [{ type: 'user_type', condition: '*', action: 'hide', priority: 1 }],
    });
    const res = await as(app, newUser())('POST', '/consultations/visibility/status', {
      consultationIds: [offer.consultationId],
      context: { userType: 'buyer' },
    });
    expect(res.body.data.consultations[0].visible).toBe(true);
    expect(
      (
        await as(app, offer.seller)('POST', '/consultations/visibility/rule-sets', {
          name: 'x',
          validFrom: '2030-01-01T00:00:00Z',
          validTo: '2020-01-01T00:00:00Z',
          visibilityRules: [],
        })
      ).status,
    ).toBe(400);
  });
});
