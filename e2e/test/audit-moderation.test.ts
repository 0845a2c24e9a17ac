import { apiOf, dayFromNow, loginAdmin, offerConsultation, register, type Offer, type Session } from './fixtures';
import { startSystem, type System } from './system';

// The moderation finding of an outside audit replayed through the gateway: an approved consultation's title
// was edited to a scam and stayed listed. The edit now waits for an admin; the public keeps
// the approved text until then.
let system: System;
beforeAll(async () => {
  system = await startSystem();
}, 90_000);
afterAll(() => system?.stop());

const SCAM = 'Pay outside the platform: t.me/scam';

/** What the public, a buyer and the seller each read of the consultation. */
async function readingsOf(offer: Offer, buyer: Session, seller: Session) {
  const detail = async (session?: Session) => (await apiOf(system, session)('GET', `/consultations/${offer.id}`)).body.data;
  const list = await apiOf(system)('GET', '/consultations?limit=100');
  return {
    anonymous: await detail(),
    buyer: await detail(buyer),
    seller: await detail(seller),
    listedTitle: list.body.data.consultations.find((c: { id: string }) => c.id === offer.id)?.title,
  };
}

test('an approved consultation edited to a scam title shows the approved title to the public until an admin approves the edit', async () => {
  const [seller, buyer, admin] = await Promise.all([register(system, 'seller'), register(system, 'buyer'), loginAdmin(system)]);
  const offer = await offerConsultation(system, seller, admin);
  const approvedTitle = (await apiOf(system)('GET', `/consultations/${offer.id}`)).body.data.title;

  const edited = await apiOf(system, seller)('PUT', `/consultations/${offer.id}`, { title: SCAM });
  expect(edited.status).toBe(200);

  const waiting = await readingsOf(offer, buyer, seller);
  expect(waiting.anonymous.title).toBe(approvedTitle);
  expect(waiting.buyer.title).toBe(approvedTitle);
  expect(waiting.listedTitle).toBe(approvedTitle);
  expect(waiting.anonymous).not.toHaveProperty('pendingRevision');
  expect(waiting.buyer).not.toHaveProperty('pendingRevision');
  expect(waiting.seller).toMatchObject({ title: approvedTitle, pendingRevision: { changes: { title: SCAM } } });
  // Still listed and bookable under the approved text.
  const day = dayFromNow(3);
  const slots = await apiOf(system)('GET', `/consultations/${offer.id}/slots?from=${day}&to=${day}`);
  expect(slots.body.data.slots.length).toBeGreaterThan(0);

  // The admin reads what waits and approves exactly that revision.
  const revision = (await apiOf(system, admin)('GET', `/consultations/${offer.id}`)).body.data.pendingRevision;
  expect(revision.changes).toEqual({ title: SCAM });
  const approved = await apiOf(system, admin)('POST', `/consultations/${offer.id}/approve`, { revisionId: revision.id });
  expect(approved.status).toBe(200);

  const after = await readingsOf(offer, buyer, seller);
  expect(after.anonymous.title).toBe(SCAM);
  expect(after.listedTitle).toBe(SCAM);
  expect(after.seller.pendingRevision).toBeNull();
});
