// A bookable consultation, as every script, bench and end-to-end test that books one seeds it:
// the seller's availability rule set (the same intervals every day of the week), its pricing, the
// consultation on both, and the admin's approval, which publishes it. Each caller reaches the API
// its own way (the SDK, fetch with retries, a test's client): it hands in one function per party
// that makes a call and resolves with the success envelope's `data`, or throws.
// No `import.meta` here: the end-to-end tests load this module through SWC as CommonJS.

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];

/**
 * One call as one party: resolves with the `data` of a 200 answer, throws otherwise. `path` is the
 * OpenAPI path (`/consultations/{id}/approve`), `params` its path parameters (`pathOf` fills them in).
 * @typedef {(method: 'POST', path: string, body: Record<string, unknown>, params?: Record<string, string>) => Promise<any>} Caller
 */

/**
 * The OpenAPI path with its parameters filled in (each URI-encoded).
 * @param {string} path
 * @param {Record<string, string>} [params]
 */
export function pathOf(path, params = {}) {
  return path.replace(/\{(\w+)\}/g, (_, name) => encodeURIComponent(params[name] ?? `{${name}}`));
}

/**
 * @typedef {object} RuleSetOptions
 * @property {string} name
 * @property {string} timezone IANA zone of the wall-clock intervals
 * @property {Array<[string, string]>} intervals every day's `[start, end]`, `HH:MM:SS`
 * @property {Record<string, unknown>} [metaData] e.g. `{ autoAccept, bufferTime, maxBookingsPerDay }`
 * @property {boolean} [enabled] sent with every interval when given (the API's default: enabled)
 */

/**
 * @typedef {object} OfferOptions
 * @property {RuleSetOptions} ruleSet
 * @property {{ basePrice: number } & Record<string, unknown>} pricing in ETB; other pricing fields as they are
 * @property {{ title: string, duration: number } & Record<string, unknown>} consultation its fields over the
 *   defaults (one to one, online, English, Business, in the rule set's zone)
 */

/**
 * @typedef {object} Offered
 * @property {any} ruleSet the rule set as created
 * @property {any} pricing the pricing as created
 * @property {any} consultation the consultation as created (a draft until approved)
 */

/**
 * The seller's rule set, pricing and consultation (not yet approved).
 * @param {Caller} seller
 * @param {OfferOptions} options
 * @returns {Promise<Offered>}
 */
export async function offerConsultation(seller, { ruleSet, pricing, consultation }) {
  const createdRuleSet = await seller('POST', '/consultations/availability-rule-sets/rule-sets', {
    name: ruleSet.name,
    timezone: ruleSet.timezone,
    ...(ruleSet.metaData ? { metaData: ruleSet.metaData } : {}),
    availabilityRules: WEEKDAYS.map((weekday) => ({
      type: 'weekly',
      weekday,
      intervals: ruleSet.intervals.map(([start, end]) => ({
        start_time: start,
        end_time: end,
        ...(ruleSet.enabled === undefined ? {} : { enabled: ruleSet.enabled }),
      })),
    })),
  });
  const createdPricing = await seller('POST', '/consultations/pricing', { currency: 'ETB', ...pricing });
  const created = await seller('POST', '/consultations', {
    sessionType: 'OneToOne',
    deliveryMode: 'Online',
    timezone: ruleSet.timezone,
    language: 'English',
    category: 'Business',
    ...consultation,
    ruleSetId: createdRuleSet.id,
    pricingId: createdPricing.id,
  });
  return { ruleSet: createdRuleSet, pricing: createdPricing, consultation: created };
}

/**
 * The admin approves the consultation (at the version it was created at): it is published.
 * @param {Caller} admin
 * @param {{ id: string, version: number }} consultation
 * @returns {Promise<any>} the approved consultation
 */
export function approveConsultation(admin, consultation) {
  return admin('POST', '/consultations/{id}/approve', { version: consultation.version }, { id: consultation.id });
}

/**
 * A published consultation buyers can book: offered by the seller, approved by the admin.
 * @param {{ seller: Caller, admin: Caller }} parties
 * @param {OfferOptions} options
 * @returns {Promise<Offered & { approved: any }>}
 */
export async function seedBookableConsultation({ seller, admin }, options) {
  const offered = await offerConsultation(seller, options);
  const approved = await approveConsultation(admin, offered.consultation);
  return { ...offered, approved };
}

/**
 * What the write loads race for (bench/writes.mjs, the k8s run's load, scripts/k8s/load.mjs): one
 * place per 5-minute slot, all day (00:00–23:55 UTC) every day, booked at once, at `price` ETB.
 * @param {{ name: string, title: string, price: number }} names the rule set's name, the consultation's title
 * @returns {OfferOptions}
 */
export function onePlaceAllDay({ name, title, price }) {
  return {
    ruleSet: {
      name,
      timezone: 'UTC',
      metaData: { autoAccept: true, bufferTime: 0, maxBookingsPerDay: 1000 },
      intervals: [['00:00:00', '23:55:00']],
      enabled: true,
    },
    pricing: { basePrice: price },
    consultation: { title, duration: 5, maxCapacity: 1 },
  };
}

/**
 * A `Caller` over the project's SDK (@mkt/client): the client's calls carry its user's token;
 * an error answer throws the SDK's ApiError.
 * @param {{ ok: (call: Promise<any>) => Promise<{ data: any }>, api: any }} client a MarketplaceClient
 * @returns {Caller}
 */
export function sdkCaller(client) {
  return async (method, path, body, params) =>
    (await client.ok(client.api[method](path, { body, ...(params ? { params: { path: params } } : {}) }))).data;
}

/**
 * A `Caller` over a function that answers `{ status, body }` (a test's client, packages/infra's
 * `call`): the `data` of a 200, an error naming the call and its answer otherwise.
 * @param {(method: string, path: string, body?: unknown) => Promise<{ status: number, body: any }>} send
 * @returns {Caller}
 */
export function responseCaller(send) {
  return async (method, path, body, params) => {
    const res = await send(method, pathOf(path, params), body);
    if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data;
  };
}
