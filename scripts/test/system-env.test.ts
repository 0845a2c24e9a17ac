import type * as SystemEnv from '../system-env.mjs' with { 'resolution-mode': 'import' };
import type * as Seed from '../lib/seed.mjs' with { 'resolution-mode': 'import' };

/* eslint-disable @typescript-eslint/no-require-imports -- ES modules, loaded through SWC as CommonJS (scripts/jest.config.js) */
const { SERVICES, standaloneEnv, systemEnv } = require('../system-env.mjs') as typeof SystemEnv;
const { offerConsultation, onePlaceAllDay, pathOf, responseCaller, seedBookableConsultation } = require('../lib/seed.mjs') as typeof Seed;
/* eslint-enable @typescript-eslint/no-require-imports */

const PORTS: Record<string, number> = { wallet: 9001, catalog: 9002, crm: 9003, consultation: 9004, review: 9005, gateway: 9000 };
const options = {
  url: (name: string) => `http://127.0.0.1:${PORTS[name]}`,
  mongoUrl: 'mongodb://127.0.0.1:27017',
  amqpUrl: 'amqp://127.0.0.1:5672',
  namespace: 'run1',
  database: (name: string) => `run1_${name}`,
  keys: { publicKey: 'PUBLIC', privateKey: 'PRIVATE' },
  internalToken: 'INTERNAL',
  admin: { email: 'admin@example.com', password: 'admin password' },
};

describe('systemEnv', () => {
  test('every process: the servers, its own database, its port, the bus namespace and the public key', () => {
    const env = systemEnv(options);
    expect(Object.keys(env).sort()).toEqual([...SERVICES].sort());
    for (const name of SERVICES)
      expect(env[name]).toMatchObject({
        MONGO_URL: options.mongoUrl,
        AMQP_URL: options.amqpUrl,
        BUS_NAMESPACE: 'run1',
        JWT_PUBLIC_KEY: 'PUBLIC',
        MONGO_DB: `run1_${name}`,
        PORT: String(PORTS[name]),
      });
  });

  test('secrets go only where they are used: the signing key and admin to the gateway, the internal token to wallet and consultation', () => {
    const env = systemEnv(options);
    const holders = (key: string) => SERVICES.filter((name) => key in env[name]);
    expect(holders('JWT_PRIVATE_KEY')).toEqual(['gateway']);
    expect(holders('ADMIN_PASSWORD')).toEqual(['gateway']);
    expect(holders('INTERNAL_API_TOKEN').sort()).toEqual(['consultation', 'wallet']);
    expect(env.consultation.WALLET_URL).toBe('http://127.0.0.1:9001');
  });

  test('the gateway reaches each service at its URL; `listen` sets the ports apart from the URLs (a balancer in front)', () => {
    const env = systemEnv({ ...options, url: (name) => `http://balancer-${name}:80`, listen: (name) => String(PORTS[name]) });
    expect(env.gateway).toMatchObject({
      WALLET_URL: 'http://balancer-wallet:80',
      CATALOG_URL: 'http://balancer-catalog:80',
      CRM_URL: 'http://balancer-crm:80',
      CONSULTATION_URL: 'http://balancer-consultation:80',
      REVIEW_URL: 'http://balancer-review:80',
      PUBLIC_URL: 'http://balancer-gateway:80',
    });
    expect(env.wallet.PORT).toBe('9001');
  });

  test('the sandbox checkout and origins by default; the services’ defaults without `checkout`', () => {
    const withCheckout = systemEnv(options);
    expect(withCheckout.wallet).toMatchObject({
      PAYMENT_PROVIDER: 'sandbox',
      ALLOW_SANDBOX_PAYMENTS: 'true',
      CHECKOUT_REDIRECT_ORIGINS: 'http://127.0.0.1:9000',
    });
    expect(withCheckout.gateway.CORS_ORIGINS).toBe('http://127.0.0.1:9000');
    const without = systemEnv({ ...options, checkout: false });
    for (const key of ['PAYMENT_PROVIDER', 'ALLOW_SANDBOX_PAYMENTS', 'CHECKOUT_REDIRECT_ORIGINS'])
      expect(without.wallet).not.toHaveProperty(key);
    expect(without.gateway).not.toHaveProperty('CORS_ORIGINS');
  });

  test('`unlimited`: the gateway’s rate limits off and no metrics listener; `common` on top of everything', () => {
    expect(systemEnv(options).gateway).not.toHaveProperty('RATE_LIMIT_IP_PER_MIN');
    const env = systemEnv({ ...options, unlimited: true, common: { LOG_LEVEL: 'warn', MONGO_DB: 'shared' } });
    expect(env.gateway).toMatchObject({
      METRICS_PORT: '0',
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_USER_PER_MIN: '0',
      RATE_LIMIT_REGISTER_IP_PER_HOUR: '0',
      RATE_LIMIT_SLOTS_PER_MIN: '0',
    });
    for (const name of SERVICES) expect(env[name]).toMatchObject({ LOG_LEVEL: 'warn', MONGO_DB: 'shared' });
  });
});

test('standaloneEnv: of the caller’s environment only PATH and HOME; this host, no grace period at the stop', () => {
  const env = standaloneEnv('production');
  expect(Object.keys(env).sort()).toEqual(['HOME', 'HOST', 'LOG_LEVEL', 'NODE_ENV', 'PATH', 'SHUTDOWN_GRACE_MS']);
  expect(env).toMatchObject({ NODE_ENV: 'production', HOST: '127.0.0.1', SHUTDOWN_GRACE_MS: '0', PATH: process.env.PATH ?? '' });
});

describe('seedBookableConsultation', () => {
  const recorder = () => {
    const calls: Array<{ who: string; method: string; path: string; body: Record<string, unknown> }> = [];
    const as = (who: string) => async (method: 'POST', path: string, body: Record<string, unknown>, params?: Record<string, string>) => {
      calls.push({ who, method, path: pathOf(path, params), body });
      if (path.endsWith('/rule-sets')) return { id: 'rs1' };
      if (path.endsWith('/pricing')) return { id: 'pr1' };
      if (path.endsWith('/approve')) return { id: 'c1', visibility: 'Published' };
      return { id: 'c1', version: 3 };
    };
    return { calls, seller: as('seller'), admin: as('admin') };
  };
  const offer = {
    ruleSet: { name: 'Mornings', timezone: 'Africa/Addis_Ababa', intervals: [['09:00:00', '12:00:00']] as Array<[string, string]> },
    pricing: { basePrice: 10 },
    consultation: { title: 'Advice', duration: 30 },
  };

  test('the rule set every day of the week, the pricing, the consultation on both, then the admin’s approval at its version', async () => {
    const { calls, seller, admin } = recorder();
    const seeded = await seedBookableConsultation({ seller, admin }, offer);
    expect(calls.map(({ who, path }) => `${who} ${path}`)).toEqual([
      'seller /consultations/availability-rule-sets/rule-sets',
      'seller /consultations/pricing',
      'seller /consultations',
      'admin /consultations/c1/approve',
    ]);
    const rules = calls[0]!.body.availabilityRules as Array<{ weekday: string; intervals: unknown[] }>;
    expect(rules.map((rule) => rule.weekday)).toEqual(['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday']);
    expect(rules[0]!.intervals).toEqual([{ start_time: '09:00:00', end_time: '12:00:00' }]);
    expect(calls[1]!.body).toEqual({ basePrice: 10, currency: 'ETB' });
    // The caller's fields, the created rule set and pricing, and the defaults: one to one, online, English, Business, the rule set's zone.
    expect(calls[2]!.body).toEqual({
      title: 'Advice',
      duration: 30,
      ruleSetId: 'rs1',
      pricingId: 'pr1',
      sessionType: 'OneToOne',
      deliveryMode: 'Online',
      language: 'English',
      category: 'Business',
      timezone: 'Africa/Addis_Ababa',
    });
    expect(calls[3]!.body).toEqual({ version: 3 });
    expect(seeded.approved).toEqual({ id: 'c1', visibility: 'Published' });
  });

  test('the caller’s fields win over the defaults; `enabled` and `metaData` only when given', async () => {
    const { calls, seller } = recorder();
    await offerConsultation(seller, {
      ...offer,
      ruleSet: { ...offer.ruleSet, enabled: true, metaData: { autoAccept: true } },
      consultation: { title: 'Group', duration: 60, sessionType: 'Group', maxCapacity: 4, language: 'Amharic' },
    });
    expect(calls[0]!.body.metaData).toEqual({ autoAccept: true });
    expect((calls[0]!.body.availabilityRules as Array<{ intervals: unknown[] }>)[0]!.intervals).toEqual([
      { start_time: '09:00:00', end_time: '12:00:00', enabled: true },
    ]);
    expect(calls[2]!.body).toMatchObject({ sessionType: 'Group', maxCapacity: 4, language: 'Amharic' });
    expect(calls).toHaveLength(3); // offered, not approved
  });

  test('a call answered with an error stops the seeding, naming the call and its answer', async () => {
    const sent: string[] = [];
    const refusing = responseCaller(async (method, path) => {
      sent.push(`${method} ${path}`);
      return path.endsWith('/pricing')
        ? { status: 422, body: { errors: [{ code: 'invalid' }] } }
        : { status: 200, body: { data: { id: 'x' } } };
    });
    await expect(seedBookableConsultation({ seller: refusing, admin: refusing }, offer)).rejects.toThrow(
      'POST /consultations/pricing: 422 {"errors":[{"code":"invalid"}]}',
    );
    expect(sent).toEqual(['POST /consultations/availability-rule-sets/rule-sets', 'POST /consultations/pricing']);
  });

  test('the write loads’ offer: one place per 5-minute slot all day in UTC, booked at once', async () => {
    const { calls, seller } = recorder();
    await offerConsultation(seller, onePlaceAllDay({ name: 'Load', title: 'Load consultation', price: 10 }));
    expect(calls[0]!.body).toMatchObject({ name: 'Load', timezone: 'UTC', metaData: { autoAccept: true, bufferTime: 0 } });
    expect((calls[0]!.body.availabilityRules as Array<{ intervals: unknown[] }>)[6]!.intervals).toEqual([
      { start_time: '00:00:00', end_time: '23:55:00', enabled: true },
    ]);
    expect(calls[1]!.body).toEqual({ basePrice: 10, currency: 'ETB' });
    expect(calls[2]!.body).toMatchObject({
      title: 'Load consultation',
      duration: 5,
      maxCapacity: 1,
      sessionType: 'OneToOne',
      timezone: 'UTC',
    });
  });
});
