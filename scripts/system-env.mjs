// What each of the six services needs in its environment to run as one system on this machine,
// beside what every service takes (MONGO_URL, AMQP_URL, BUS_NAMESPACE, JWT_PUBLIC_KEY, PORT,
// MONGO_DB): the wallet's sandbox checkout behind the gateway, the consultation → wallet internal
// API, the gateway's signing key, seeded admin and upstreams. Used by the containers' run step
// and the mixed-version run (each adds what is its own: metrics port, rate limits, log level).

export const SERVICES = ['wallet', 'catalog', 'crm', 'consultation', 'review', 'gateway'];

/**
 * service → its own variables. `url(service)`: where that service listens; `internalToken`: the
 * wallet's internal API token; `privateKey`: the gateway's JWT signing key; `admin`: the seeded
 * admin's `{ email, password }`.
 */
export function serviceEnvironments({ url, internalToken, privateKey, admin }) {
  return {
    wallet: {
      PUBLIC_URL: url('gateway'),
      PAYMENT_PROVIDER: 'sandbox',
      ALLOW_SANDBOX_PAYMENTS: 'true',
      CHECKOUT_REDIRECT_ORIGINS: url('gateway'),
      INTERNAL_API_TOKEN: internalToken,
    },
    catalog: {},
    crm: {},
    consultation: { WALLET_URL: url('wallet'), INTERNAL_API_TOKEN: internalToken },
    review: {},
    gateway: {
      JWT_PRIVATE_KEY: privateKey,
      PUBLIC_URL: url('gateway'),
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
      CORS_ORIGINS: url('gateway'),
      ...Object.fromEntries(SERVICES.filter((s) => s !== 'gateway').map((s) => [`${s.toUpperCase()}_URL`, url(s)])),
    },
  };
}
