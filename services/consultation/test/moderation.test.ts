import { admin, as, bookingBody, givenOffer, newUser, useConsultationApp, type Offer } from './harness';

const app = useConsultationApp();
const SCAM = 'Pay outside the platform: t.me/scam';

const edit = (offer: Offer, body: object) => as(app, offer.seller)('PUT', `/consultations/${offer.consultationId}`, body);
const approve = (offer: Offer, body?: object) => as(app, admin)('POST', `/consultations/${offer.consultationId}/approve`, body);
const detailAs = async (offer: Offer, user = newUser()) => (await as(app, user)('GET', `/consultations/${offer.consultationId}`)).body.data;
const anonymousDetail = async (offer: Offer) => (await as(app, undefined)('GET', `/consultations/${offer.consultationId}`)).body.data;
const listedTitle = async (offer: Offer) => {
  const res = await as(app, undefined)('GET', '/consultations?limit=100');
  return res.body.data.consultations.find((c: { id: string }) => c.id === offer.consultationId)?.title;
};

describe('an edit of the public text of an approved consultation waits for an admin (issue 20)', () => {
  test('the scam title replayed: the public keeps the approved text until an admin approves the revision it read', async () => {
    const offer = await givenOffer(app);
    const before = await anonymousDetail(offer);

    const edited = await edit(offer, { title: SCAM, tags: ['scam'] });

    expect(edited.status).toBe(200);
    expect(edited.body.message).toBe('Consultation updated; the new text is live once an admin approves it');
    expect(edited.body.data).toMatchObject({ title: 'Career coaching', currentStatus: 'Approved', visibility: 'Published' });
    expect(edited.body.data.pendingRevision).toMatchObject({ changes: { title: SCAM, tags: ['scam'] } });
    // Anyone who is not its seller or an admin: the approved text, nothing of the revision, not even that the record changed.
    for (const seen of [await anonymousDetail(offer), await detailAs(offer, newUser('buyer'))]) {
      expect(seen).toMatchObject({ title: 'Career coaching', tags: ['coaching'], updatedAt: before.updatedAt });
      expect(seen).not.toHaveProperty('pendingRevision');
    }
    expect(await listedTitle(offer)).toBe('Career coaching');
    // Still on the market: booking goes on under the approved text.
    const booked = await as(app, newUser())('POST', '/consultations/bookings', bookingBody(offer));
    expect(booked.status).toBe(200);
    expect(booked.body.data.consultationTitle).toBe('Career coaching');
    // Its seller and admins see what waits.
    const revision = (await detailAs(offer, offer.seller)).pendingRevision;
    expect(revision).toEqual({ id: expect.any(String), submittedAt: expect.any(String), changes: { title: SCAM, tags: ['scam'] } });
    expect((await detailAs(offer, admin)).pendingRevision).toEqual(revision);

    // The admin approves the revision they read, by its id; without one it is refused.
    const unnamed = await approve(offer);
    expect(unnamed.status).toBe(422);
    expect(unnamed.body.errors[0]).toMatchObject({ path: 'revisionId', code: 'invalid' });
    expect(await listedTitle(offer)).toBe('Career coaching');
    const approved = await approve(offer, { revisionId: revision.id });
    expect(approved.status).toBe(200);
    expect(approved.body.message).toBe('Revision approved');
    expect(await anonymousDetail(offer)).toMatchObject({ title: SCAM, tags: ['scam'], currentStatus: 'Approved' });
    expect((await detailAs(offer, offer.seller)).pendingRevision).toBeNull();
    expect((await approve(offer, { revisionId: revision.id })).status).toBe(409);
  });

  test('a second edit replaces the pending revision (both changes under review), and the admin cannot approve one they did not read', async () => {
    const offer = await givenOffer(app);
    const first = (await edit(offer, { title: 'Career coaching, plainly' })).body.data.pendingRevision;
    const second = (await edit(offer, { description: SCAM })).body.data.pendingRevision;

    expect(second.id).not.toBe(first.id);
    expect(second.changes).toEqual({ title: 'Career coaching, plainly', description: SCAM });
    const stale = await approve(offer, { revisionId: first.id });
    expect(stale.status).toBe(409);
    expect(stale.body.errors[0].code).toBe('invalid_state');
    expect(await anonymousDetail(offer)).toMatchObject({ title: 'Career coaching', description: 'One hour' });

    // Editing back to the live text leaves nothing to review.
    const back = await edit(offer, { title: 'Career coaching', description: 'One hour' });
    expect(back.body.data.pendingRevision).toBeNull();
    expect((await approve(offer, { revisionId: second.id })).status).toBe(409);
  });

  test('a change of a bookable field sends it back to Pending with the waiting text folded in; the next approval covers all of it', async () => {
    const offer = await givenOffer(app);
    await edit(offer, { title: SCAM });

    const rebooked = await edit(offer, { duration: 45 });

    expect(rebooked.body.data).toMatchObject({
      title: SCAM,
      duration: 45,
      currentStatus: 'Pending',
      visibility: 'Hidden',
      pendingRevision: null,
    });
    expect((await as(app, undefined)('GET', `/consultations/${offer.consultationId}`)).status).toBe(404);
    expect(await listedTitle(offer)).toBeUndefined();
    const approved = await approve(offer);
    expect(approved.body).toMatchObject({ message: 'Consultation approved', data: { currentStatus: 'Approved', visibility: 'Published' } });
    expect(await anonymousDetail(offer)).toMatchObject({ title: SCAM, duration: 45 });
  });

  test('a Pending consultation’s text is edited in place (nobody sees it before approval), and naming a revision it does not have is 409', async () => {
    const offer = await givenOffer(app, { approve: false });

    const edited = await edit(offer, { title: 'Not yet approved', category: 'Careers' });

    expect(edited.body.data).toMatchObject({ title: 'Not yet approved', currentStatus: 'Pending', pendingRevision: null });
    expect((await approve(offer, { revisionId: '00000000-0000-4000-8000-000000000000' })).status).toBe(409);
    expect((await approve(offer)).status).toBe(200);
    expect(await anonymousDetail(offer)).toMatchObject({ title: 'Not yet approved', category: 'Careers' });
  });

  test('another seller can neither edit nor see the revision', async () => {
    const offer = await givenOffer(app);
    await edit(offer, { title: SCAM });
    const other = newUser('seller');

    expect((await as(app, other)('PUT', `/consultations/${offer.consultationId}`, { title: 'Mine now' })).status).toBe(403);
    expect(await detailAs(offer, other)).not.toHaveProperty('pendingRevision');
    expect((await as(app, offer.seller)('POST', `/consultations/${offer.consultationId}/approve`, {})).status).toBe(403);
  });
});
