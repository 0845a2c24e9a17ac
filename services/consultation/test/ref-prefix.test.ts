import { stopRuntime } from '@mkt/kit/runtime';
import { loadConfig } from '../src/config';
import {
  as,
  bookingBody,
  givenOffer,
  newUser,
  startConsultation,
  useConsultationApp,
  ZONE,
  type ConsultationApp,
  models,
  approveAsRead,
} from './harness';

// `REF_PREFIX` names the references this instance writes (CON, AVL-RST); a record keeps the
// reference it was made with, and every instance finds it by that reference, whatever prefix it
// is configured with now.

const app = useConsultationApp();
let tst: Omit<ConsultationApp, 'wallet'>;
const tstApp = () => tst;

beforeAll(async () => {
  tst = await startConsultation(app().wallet.url, undefined, { REF_PREFIX: 'TST' });
});
afterAll(async () => {
  await stopRuntime(tst.started);
});

describe('REF_PREFIX', () => {
  test('a rule set and a consultation made with prefix TST carry TST references, kept in the database', async () => {
    const offer = await givenOffer(tstApp, { approve: false });
    expect(offer.referenceId).toMatch(/^TST-CON-[A-Z0-9]{8}$/);
    const ruleSet = await models().RuleSet.findById(offer.ruleSetId).lean();
    expect(ruleSet!.referenceId).toMatch(/^TST-AVL-RST-[A-Z0-9]{8}$/);
    expect((await models().Consultation.findById(offer.consultationId).lean())!.referenceId).toBe(offer.referenceId);
    const detail = await as(tstApp, offer.seller)('GET', `/consultations/availability-rule-sets/rule-sets/${ruleSet!.referenceId}`);
    expect(detail.body.data.referenceId).toBe(ruleSet!.referenceId);
  });

  test('records made under MKT are still found by their references on a TST instance, and TST ones on an MKT instance', async () => {
    const old = await givenOffer(app, { approve: false });
    expect(old.referenceId).toMatch(/^MKT-CON-/);
    const oldRuleSetRef = (await models().RuleSet.findById(old.ruleSetId).lean())!.referenceId;
    expect(oldRuleSetRef).toMatch(/^MKT-AVL-RST-/);
    const approved = await approveAsRead(tstApp, old.referenceId);
    expect(approved.body.data).toMatchObject({ id: old.consultationId, currentStatus: 'Approved' });
    expect((await as(tstApp, undefined)('GET', `/consultations/${old.referenceId}`)).body.data.id).toBe(old.consultationId);

    // A new consultation on the TST instance may name the seller's MKT rule set by its reference.
    const created = await as(tstApp, old.seller)('POST', '/consultations', {
      title: 'Second opinion',
      duration: 60,
      sessionType: 'OneToOne',
      deliveryMode: 'Online',
      timezone: ZONE,
      language: 'en',
      category: 'Career',
      ruleSetId: oldRuleSetRef,
      pricingId: old.pricingId,
    });
    expect(created.status).toBe(200);
    expect(created.body.data.referenceId).toMatch(/^TST-CON-/);
    expect((await as(app, old.seller)('GET', `/consultations/${created.body.data.referenceId}`)).body.data.ruleSetId).toBe(old.ruleSetId);

    // Booking on the MKT instance by the TST consultation's reference and the MKT rule set's.
    await approveAsRead(app, created.body.data.referenceId);
    const buyer = newUser('buyer');
    const booked = await as(app, buyer)(
      'POST',
      '/consultations/bookings',
      bookingBody(
        { ...old, consultationId: created.body.data.referenceId, ruleSetId: oldRuleSetRef },
        { subTotal: 500, totalAmount: 500, startTime: '13:00', endTime: '14:00' },
      ),
    );
    expect(booked.status).toBe(200);
    expect(booked.body.data).toMatchObject({ status: 'Confirmed', consultationId: created.body.data.id });
  });

  test('a prefix that is not 2 to 10 upper-case letters or digits stops the service at start', () => {
    const env = { MONGO_URL: 'mongodb://unused', AMQP_URL: 'amqp://unused', JWT_PUBLIC_KEY: 'key' };
    expect(() => loadConfig({ ...env, REF_PREFIX: 'mkt' })).toThrow(/REF_PREFIX/);
    expect(loadConfig({ ...env, REF_PREFIX: 'SHOP2' }).REF_PREFIX).toBe('SHOP2');
  });
});
