import { PRIVATE_PREFIXES } from '../src/http/private-prefixes';
import { as, givenOffer, newUser, useConsultationApp } from './harness';

/**
 * Whether a path under `/consultations` is one of the private prefixes in any spelling a router
 * could be lenient about (case, repeated slashes). The table's routing is strict, so another
 * spelling reaches no handler at all; this says which spellings the guard must never let a
 * handler answer without a token (the routing test checks both).
 */
function isFixedPath(path: string): boolean {
  const normalized = path.toLowerCase().replace(/\/{2,}/g, '/');
  return PRIVATE_PREFIXES.some((prefix) => normalized === prefix || normalized.startsWith(`${prefix}/`));
}

const app = useConsultationApp();

/** Every path behind a token, with a body a handler would accept if it were reached. */
const PRIVATE: Array<[string, string, object | undefined]> = [
  ['GET', '/consultations/bookings', undefined],
  ['POST', '/consultations/bookings/cancel', { bookingId: 'bk_x' }],
  ['GET', '/consultations/sessions', undefined],
  ['POST', '/consultations/sessions/ses_x/start', {}],
  ['GET', '/consultations/availability-rule-sets/rule-sets', undefined],
  ['POST', '/consultations/pricing', { basePrice: 1, currency: 'ETB' }],
  ['POST', '/consultations/pricing/promotional-discounts/validate-coupon', { couponCode: 'X', consultationId: 'con_x' }],
  ['POST', '/consultations/visibility/status', { consultationIds: ['con_x'] }],
];

/** The spellings an attacker tries: case, a trailing slash, repeated slashes, percent-encoding. */
function spellings(path: string): string[] {
  const [, , first, ...rest] = path.split('/');
  const tail = rest.length ? `/${rest.join('/')}` : '';
  return [
    `/consultations/${first!.toUpperCase()}${tail}`,
    `/consultations/${first![0]!.toUpperCase()}${first!.slice(1)}${tail.toUpperCase()}`,
    `/consultations//${first}${tail}`,
    `/consultations/${first}${tail}/`,
    `/consultations/%${first!.charCodeAt(0).toString(16)}${first!.slice(1)}${tail}`,
  ];
}

describe('routing is case-sensitive and strict: no spelling of a private path answers without a token', () => {
  test.each(PRIVATE)('%s %s', async (method, path, body) => {
    const anonymous = as(app, undefined);
    expect((await anonymous(method, path, body)).status).toBe(401);
    const answers = await Promise.all(
      spellings(path).map(async (spelling) => ({ spelling, ...(await anonymous(method, spelling, body)) })),
    );
    // 405: the spelling matches another method's route (`GET /consultations/:id`), never this handler.
    const answered = answers.filter(
      (res) => ![401, 404, 405].includes(res.status) || (res.body as { success?: boolean }).success !== false,
    );
    expect(answered.map(({ spelling, status }) => `${spelling} → ${status}`)).toEqual([]);
  });

  test('with a token, another spelling is not the route: 404, or 405 where it names a consultation, never the handler', async () => {
    const seller = as(app, newUser('seller'));
    const pricing = { basePrice: 10, currency: 'ETB' };
    expect((await seller('POST', '/consultations/pricing', pricing)).status).toBe(200);
    const answers: Record<string, number> = {};
    for (const path of ['/consultations/PRICING', '/consultations/Pricing', '/consultations/pricing/', '/CONSULTATIONS/pricing'])
      answers[path] = (await seller('POST', path, pricing)).status;
    expect(answers).toEqual({
      '/consultations/PRICING': 405,
      '/consultations/Pricing': 405,
      '/consultations/pricing/': 404,
      '/CONSULTATIONS/pricing': 404,
    });
  });

  test('a method a served path does not serve is 405 with Allow, in the envelope', async () => {
    const offer = await givenOffer(app);
    const res = await as(app, newUser('seller'))('DELETE', `/consultations/${offer.consultationId}`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toMatch(/\bGET\b/);
    expect(res.body).toMatchObject({ success: false, errors: [{ code: 'method_not_allowed' }] });
  });

  test('public paths answer only in their own spelling; a hidden consultation stays unknown in every one', async () => {
    const anonymous = as(app, undefined);
    const listed = await givenOffer(app);
    const hidden = await givenOffer(app, { approve: false });
    const from = new Date().toISOString().slice(0, 10);
    expect((await anonymous('GET', '/consultations')).status).toBe(200);
    expect((await anonymous('GET', `/consultations/${listed.consultationId}`)).status).toBe(200);
    expect((await anonymous('GET', `/consultations/${listed.consultationId}/slots?from=${from}&to=${from}`)).status).toBe(200);
    for (const path of ['/CONSULTATIONS', `/Consultations/${listed.consultationId}`, `/consultations/${listed.consultationId}/SLOTS`])
      expect((await anonymous('GET', path)).status).toBe(404);
    for (const key of [hidden.consultationId, hidden.referenceId]) {
      for (const path of [`/consultations/${key}`, `/consultations/${key}/`, `/consultations/${key}/slots?from=${from}&to=${from}`]) {
        const res = await anonymous('GET', path);
        expect(res.status).toBe(404);
        expect(JSON.stringify(res.body)).not.toContain('basePrice');
      }
    }
  });

  test('the token gate compares as loosely as any router could match', () => {
    for (const path of ['/PRICING', '/Bookings/cancel', '//sessions/x/start', '/visibility', '/Availability-Rule-Sets/rule-sets'])
      expect(isFixedPath(path)).toBe(true);
    for (const path of ['/', '/con_x', '/con_x/slots', '/pricingx']) expect(isFixedPath(path)).toBe(false);
  });
});
