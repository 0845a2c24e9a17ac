// What the six services need in their environment to run as one system on this machine: what
// every process takes (MONGO_URL, AMQP_URL, BUS_NAMESPACE, JWT_PUBLIC_KEY, MONGO_DB, PORT, the
// internal API token) and what each needs of its own: the wallet's sandbox checkout behind the
// gateway, the consultation → wallet internal API, the gateway's signing key, seeded admin and
// upstreams. `systemEnv()` is the one place that says so: the containers' run step, the
// mixed-version run, the generated clients' run, the benches that start a whole system and the
// end-to-end tests' system (e2e/test/system.ts) build their processes' environments from it, each
// adding what is its own (node environment, log level, metrics port, a key directory).
// No `import.meta` here: the end-to-end tests load this module through SWC as CommonJS.

export const SERVICES = /** @type {const} */ (['wallet', 'catalog', 'crm', 'consultation', 'review', 'gateway']);

/** @typedef {(typeof SERVICES)[number]} ProcessName */
/** @typedef {Record<string, string>} Env */

/**
 * @typedef {object} SystemEnvOptions
 * @property {(name: ProcessName) => string} url where each process is reached (its upstreams' and the
 *   consultation's WALLET_URL point there; the gateway's is the public URL)
 * @property {(name: ProcessName) => string} [listen] the port each process listens on (PORT): the one of
 *   `url` when not given
 * @property {string} mongoUrl
 * @property {string} amqpUrl
 * @property {string} namespace BUS_NAMESPACE: the exchange and queues of this system
 * @property {(name: ProcessName) => string} database MONGO_DB of each process
 * @property {{ publicKey: string, privateKey: string }} keys the gateway signs with the private key, every
 *   process verifies with the public one (both '' when a caller configures a key directory instead)
 * @property {string} internalToken the credential on `/internal/*` (paid bookings: consultation → wallet),
 *   given to those two only
 * @property {{ email: string, password: string }} admin the admin the gateway seeds
 * @property {boolean} [checkout] the wallet's sandbox checkout (PAYMENT_PROVIDER=sandbox, allowed in
 *   production too), its redirects and the gateway's CORS limited to the gateway's own origin;
 *   default true. Without it the services' defaults hold (sandbox outside production, any origin).
 * @property {boolean} [unlimited] the gateway's rate limits off and no metrics listener: one client
 *   address makes every call, and systems run side by side; default false
 * @property {Env} [common] on top of every process's environment
 */

/**
 * On top of a system's environment when its processes get nothing of the caller's (the mixed-version
 * run, the generated clients' run): PATH and HOME of this machine, `nodeEnv`, this host only, and
 * no grace period at the stop (no load balancer to drain).
 * @param {'production' | 'development'} nodeEnv
 * @returns {Env}
 */
export function standaloneEnv(nodeEnv) {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    NODE_ENV: nodeEnv,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    SHUTDOWN_GRACE_MS: '0',
  };
}

/**
 * What every process takes, whatever it is: its servers and database, the bus namespace, the key
 * it verifies tokens with, its port. A bench that starts one service alone (bench/lib/service-bench.mjs)
 * starts it with this.
 * @param {{ mongoUrl: string, amqpUrl: string, namespace: string, database: string, publicKey: string, port: string }} options
 * @returns {Env}
 */
export function processEnv({ mongoUrl, amqpUrl, namespace, database, publicKey, port }) {
  return { MONGO_URL: mongoUrl, AMQP_URL: amqpUrl, BUS_NAMESPACE: namespace, JWT_PUBLIC_KEY: publicKey, MONGO_DB: database, PORT: port };
}

/**
 * Each process's environment (without the caller's `process.env`): name → variables.
 * @param {SystemEnvOptions} options
 * @returns {Record<ProcessName, Env>}
 */
export function systemEnv(options) {
  const { url, mongoUrl, amqpUrl, namespace, database, keys, internalToken, admin, checkout = true, unlimited = false } = options;
  const listen = options.listen ?? ((name) => new URL(url(name)).port);
  const gateway = url('gateway');
  /** @type {Record<ProcessName, Env>} */
  const own = {
    wallet: {
      INTERNAL_API_TOKEN: internalToken,
      PUBLIC_URL: gateway,
      ...(checkout ? { PAYMENT_PROVIDER: 'sandbox', ALLOW_SANDBOX_PAYMENTS: 'true', CHECKOUT_REDIRECT_ORIGINS: gateway } : {}),
    },
    catalog: {},
    crm: {},
    consultation: { WALLET_URL: url('wallet'), INTERNAL_API_TOKEN: internalToken },
    review: {},
    gateway: {
      JWT_PRIVATE_KEY: keys.privateKey,
      PUBLIC_URL: gateway,
      ADMIN_EMAIL: admin.email,
      ADMIN_PASSWORD: admin.password,
      ...(checkout ? { CORS_ORIGINS: gateway } : {}),
      ...Object.fromEntries(SERVICES.filter((s) => s !== 'gateway').map((s) => [`${s.toUpperCase()}_URL`, url(s)])),
      ...(unlimited
        ? {
            METRICS_PORT: '0',
            RATE_LIMIT_IP_PER_MIN: '0',
            RATE_LIMIT_USER_PER_MIN: '0',
            RATE_LIMIT_REGISTER_IP_PER_HOUR: '0',
            RATE_LIMIT_SLOTS_PER_MIN: '0',
          }
        : {}),
    },
  };
  const environments = /** @type {Record<ProcessName, Env>} */ ({});
  for (const name of SERVICES)
    environments[name] = {
      ...processEnv({ mongoUrl, amqpUrl, namespace, database: database(name), publicKey: keys.publicKey, port: listen(name) }),
      ...own[name],
      ...options.common,
    };
  return environments;
}
