import { admin, as, bookingBody, givenOffer, listenFor, models, newUser, useConsultationApp, type Offer } from './harness';

const app = useConsultationApp();

const editAs = (offer: Offer, user: Parameters<typeof as>[1], body: object) =>
  as(app, user)('PUT', `/consultations/${offer.consultationId}`, body);

describe('an admin’s edit of a seller’s consultation is audited', () => {
  test('the admin’s edit carries one entry with before and after; the owner’s edit, a refused edit and a stranger’s none', async () => {
    const events = await listenFor(['consultation.admin_action.recorded']);
    const offer = await givenOffer(app, { approve: false });
    const edits = () => events.seen.filter((e) => e.data.targetId === offer.consultationId && e.data.action === 'consultation.edit');

    expect((await editAs(offer, offer.seller, { title: 'The seller’s own title' })).status).toBe(200); // the owner's: nothing
    expect((await editAs(offer, newUser('seller'), { title: 'Someone else’s' })).status).toBe(403); // refused: nothing
    expect((await editAs(offer, admin, { maxCapacity: 3 })).status).toBe(422); // refused (OneToOne): nothing
    const edited = await editAs(offer, admin, { title: 'Fixed by an admin', duration: 45 });
    expect(edited.status).toBe(200);
    expect(edited.body.data).toMatchObject({ title: 'Fixed by an admin', duration: 45, version: 3 });

    await events.waitFor((e) => e.data.targetId === offer.consultationId && e.data.action === 'consultation.edit');
    await events.settle();
    expect(edits().map((e) => e.data)).toEqual([
      expect.objectContaining({
        action: 'consultation.edit',
        actorId: admin.id,
        actorRole: 'admin',
        targetType: 'consultation',
        targetId: offer.consultationId,
        before: { title: 'The seller’s own title', duration: 60, version: 2 },
        after: { title: 'Fixed by an admin', duration: 45, version: 3 },
      }),
    ]);
    await events.close();
  });

  test('an admin’s edit of an approved consultation’s text records the pending revision it made', async () => {
    const events = await listenFor(['consultation.admin_action.recorded']);
    const offer = await givenOffer(app);
    const edited = await editAs(offer, admin, { title: 'Reworded by an admin' });
    expect(edited.status).toBe(200);
    const revisionId = edited.body.data.pendingRevision.id as string;
    const entry = await events.waitFor((e) => e.data.targetId === offer.consultationId && e.data.action === 'consultation.edit');
    expect(entry.data).toMatchObject({ before: { pendingRevision: null, version: 2 }, after: { pendingRevision: revisionId, version: 3 } });
    await events.settle();
    expect(events.seen.filter((e) => e.data.targetId === offer.consultationId && e.data.action === 'consultation.edit')).toHaveLength(1);
    await events.close();
  });
});

describe('an admin’s move of a seller’s session is audited', () => {
  test('the admin’s start and end each carry one entry; the seller’s own moves and a refused move none', async () => {
    const events = await listenFor(['consultation.admin_action.recorded']);
    const sessionOf = async () => {
      const offer = await givenOffer(app);
      const booking = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer));
      const sessionId = booking.body.data.sessionId as string;
      const startsAt = new Date(Date.now() - 60 * 60_000);
      await models().Session.updateOne({ _id: sessionId }, { $set: { startsAt, endsAt: new Date(startsAt.getTime() + 3_600_000) } });
      return { offer, sessionId, startsAt };
    };
    const moves = (id: string) => events.seen.filter((e) => e.data.targetId === id);
    const byAdmin = await sessionOf();
    const move = (user: Parameters<typeof as>[1], id: string, what: string, body: object = {}) =>
      as(app, user)('POST', `/consultations/sessions/${id}/${what}`, body);
    expect((await move(admin, byAdmin.sessionId, 'end')).status).toBe(409); // refused: not started, nothing
    expect((await move(newUser('seller'), byAdmin.sessionId, 'start')).status).toBe(403); // another seller: nothing
    expect((await move(admin, byAdmin.sessionId, 'start', { actualStartTime: byAdmin.startsAt.toISOString() })).status).toBe(200);
    expect((await move(admin, byAdmin.sessionId, 'end', { sessionSummary: 'Ended by an admin' })).status).toBe(200);
    const bySeller = await sessionOf();
    expect((await move(bySeller.offer.seller, bySeller.sessionId, 'start', {})).status).toBe(200);
    expect((await move(bySeller.offer.seller, bySeller.sessionId, 'end', {})).status).toBe(200);

    await events.waitFor((e) => e.data.targetId === byAdmin.sessionId && e.data.action === 'session.end');
    await events.settle();
    expect(moves(bySeller.sessionId)).toEqual([]);
    expect(moves(byAdmin.sessionId).map((e) => e.data)).toEqual([
      expect.objectContaining({
        action: 'session.start',
        actorId: admin.id,
        targetType: 'session',
        before: { status: 'Scheduled' },
        after: { status: 'In Progress', startedAt: byAdmin.startsAt.toISOString() },
      }),
      expect.objectContaining({
        action: 'session.end',
        before: { status: 'In Progress' },
        after: expect.objectContaining({ status: 'Completed', sessionSummary: 'Ended by an admin' }),
      }),
    ]);
    await events.close();
  });
});
