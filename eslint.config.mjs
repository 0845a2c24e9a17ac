import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];

/** Imports no file of `service` may make: another service's code, by relative path or package name. */
const otherServices = (service) => {
  const others = SERVICES.filter((name) => name !== service).join('|');
  return [
    {
      regex: `^(\\.\\./)+(services/)?(${others})(/|$)`,
      message: 'A service never imports another service’s code: share through @mkt/contracts or events (ADR 0001).',
    },
    { regex: `^@mkt/(${others})(/|$)`, message: 'A service never imports another service’s code (ADR 0001).' },
  ];
};

/**
 * The shape of every service (docs/architecture.md): http/events → application →
 * domain, and db beside the domain. Type imports are allowed everywhere except where a layer must
 * not even know a module (the domain: no mongoose, no db).
 */
const LAYERS = {
  db: {
    patterns: [
      {
        regex: '^(\\.\\./)+(http|events|application)(/|$)',
        message: 'db is the bottom layer: repositories carry out decisions, they never call up.',
      },
    ],
    paths: [],
  },
  domain: {
    patterns: [
      {
        regex: '^(\\.\\./)+(db|http|events|application|payments|proxy)(/|$)',
        message: 'The domain is pure: given what was read and the command, it decides; it reads and writes nothing.',
        allowTypeImports: false,
      },
      { regex: '^@mkt/kit/(?!domain$)', message: 'The domain imports only kit’s pure part: @mkt/kit/domain.' },
    ],
    paths: [
      { name: 'express', message: 'The domain knows no HTTP.' },
      {
        name: 'mongoose',
        message: 'The domain knows no database: repositories in db/ carry out its decisions.',
        allowTypeImports: false,
      },
      { name: 'amqplib', message: 'The domain does no I/O.' },
      { name: 'pino', message: 'The domain does no I/O.' },
      { name: 'node:http', message: 'The domain does no I/O.' },
      { name: 'node:https', message: 'The domain does no I/O.' },
      { name: 'node:net', message: 'The domain does no I/O.' },
      { name: 'node:fs', message: 'The domain does no I/O.' },
      { name: 'undici', message: 'The domain does no I/O.' },
    ],
  },
  application: {
    patterns: [{ regex: '^(\\.\\./)+(http|events)(/|$)', message: 'Use cases know no transport: http/ and events/ call them.' }],
    paths: [
      { name: 'express', message: 'Use cases know no HTTP.' },
      { name: 'mongoose', message: 'Use cases hold no queries: a repository in db/ does.' },
    ],
  },
  http: {
    patterns: [{ regex: '^(\\.\\./)+(db|events)(/|$)', message: 'Handlers call the use cases, not the database (types are fine).' }],
    paths: [{ name: 'mongoose', message: 'Handlers call the use cases, not the database.' }],
  },
  events: {
    patterns: [{ regex: '^(\\.\\./)+http(/|$)', message: 'Consumers know no HTTP.' }],
    paths: [{ name: 'mongoose', message: 'Consumers are thin adapters: a repository in db/ queries.' }],
  },
};

/**
 * typescript-eslint takes `allowTypeImports` per path and pattern: a type-only import is never a
 * dependency at run time (allowed unless the entry says `allowTypeImports: false`).
 */
const restrict = (patterns, paths = []) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    {
      paths: paths.map((path) => ({ allowTypeImports: true, ...path })),
      patterns: patterns.map((pattern) => ({ allowTypeImports: true, ...pattern })),
    },
  ],
});

// Flat config does not merge a rule's options across blocks: each layer's block repeats the
// service-wide patterns.
// The one exception, to be removed by consultation's owners: its paid-booking tests run the
// wallet in the same process (its composition and models), a test of the two together.
const CROSS_SERVICE_EXCEPTIONS = { consultation: ['services/consultation/test/**'] };

/**
 * Routes exist once, in the contracts' endpoint tables, mounted by kit's `mountEndpoints` (its own
 * case-sensitive, strict matcher): no router of a service's own.
 */
const NO_EXPRESS_ROUTER = {
  name: 'express',
  importNames: ['Router'],
  message: 'Routes come from the endpoint table: mountEndpoints() from @mkt/kit/http.',
};
const NO_KIT_ROUTER = {
  name: '@mkt/kit/http',
  importNames: ['withInput'],
  message: 'Routes come from the endpoint table: mountEndpoints() and handle() from @mkt/kit/http.',
};

const layering = SERVICES.flatMap((service) => [
  {
    files: [`services/${service}/**/*.ts`],
    ignores: CROSS_SERVICE_EXCEPTIONS[service] ?? [],
    rules: restrict(otherServices(service), [NO_EXPRESS_ROUTER, NO_KIT_ROUTER]),
  },
  ...Object.entries(LAYERS).map(([layer, rule]) => ({
    files: [`services/${service}/src/${layer}/**/*.ts`],
    rules: restrict([...rule.patterns, ...otherServices(service)], [...rule.paths, NO_EXPRESS_ROUTER, NO_KIT_ROUTER]),
  })),
]);

const KIT_ROOT = { name: '@mkt/kit', message: 'kit has no root entry: import from its area (@mkt/kit/http, /bus, /db, /runtime, …).' };
const KIT_FILES = { regex: '^@mkt/kit/(dist|src)(/|$)', message: 'Import kit by area (@mkt/kit/http, /bus, …), never its files.' };

/**
 * A service's and kit's code load their area's contracts only (packages/contracts/README.md,
 * "Entries"): the index builds every area's schemas and carries the document builders
 * (OpenAPI, AsyncAPI, the event-schema comparator). A service imports `@mkt/contracts/<service>`
 * (the gateway also `/routes`, its proxy's schema-free route list), kit `@mkt/contracts/core`. The one
 * exception: the gateway's documents, built from the index on their first request.
 * (Repeats the kit rule: flat config does not merge a rule's options across blocks.)
 */
const CONTRACTS_ROOT = {
  name: '@mkt/contracts',
  message:
    'The contracts’ index loads every area’s schemas and the document builders: import your area’s entry (@mkt/contracts/<service>, kit /core).',
};
const contractsEntries = (allowed) => ({
  regex: `^@mkt/contracts/(?!(${allowed.join('|')})$)`,
  message: `Import only ${allowed.map((entry) => `@mkt/contracts/${entry}`).join(' or ')} here: another area's entry loads its schemas.`,
});
const contractsRule = (allowed) => ({
  'no-restricted-imports': ['error', { paths: [KIT_ROOT, CONTRACTS_ROOT], patterns: [KIT_FILES, contractsEntries(allowed)] }],
});
const contractsByArea = [
  ...SERVICES.map((service) => ({
    files: [`services/${service}/src/**/*.ts`],
    ignores: service === 'gateway' ? ['services/gateway/src/http/docs.ts'] : [],
    rules: contractsRule(service === 'gateway' ? ['gateway', 'routes'] : [service]),
  })),
  { files: ['packages/kit/src/**/*.ts'], rules: contractsRule(['core']) },
];

/** Syntax no code may use: each entry names the incident that made it a rule. */
const FORBIDDEN_SYNTAX = [
  {
    selector: "Property[key.name='err'][value.type='MemberExpression'][value.property.name='message']",
    message: 'Log the error object ({ err }): its message alone drops the stack.',
  },
  {
    selector: "Property[key.name='err'] > ChainExpression > MemberExpression[property.name='message']",
    message: 'Log the error object ({ err }): its message alone drops the stack.',
  },
];
const FORBIDDEN_IN_SERVICES = [
  ...FORBIDDEN_SYNTAX,
  {
    selector: "CallExpression[callee.object.name='express'][callee.property.name='Router']",
    message: 'Routes come from the endpoint table: mountEndpoints() from @mkt/kit/http.',
  },
];
/**
 * Publishing after a write happens in one place: the repository that puts an event in a
 * document's outbox hands it to the relay (`eventsWritten` from kit). A use case never flushes.
 */
const FORBIDDEN_IN_APPLICATION = [
  ...FORBIDDEN_IN_SERVICES,
  {
    selector: "CallExpression[callee.property.name='flush']",
    message: 'Use cases never publish: the repository that writes the event calls eventsWritten() from kit.',
  },
  {
    selector: "CallExpression[callee.name='eventsWritten']",
    message: 'Use cases never publish: the repository that writes the event calls eventsWritten() from kit.',
  },
];

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '.tools/**',
      '.dev/**',
      'coverage/**',
      'packages/client/src/generated/**',
      'packages/client/generated/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'error',
      eqeqeq: ['error', 'always'],
      'no-shadow': 'off',
      '@typescript-eslint/no-shadow': 'error',
      'no-restricted-syntax': ['error', ...FORBIDDEN_SYNTAX],
      // Kit is imported by area, through its package's exports map (packages/kit/README.md).
      'no-restricted-imports': ['error', { paths: [KIT_ROOT], patterns: [KIT_FILES] }],
    },
  },
  ...contractsByArea,
  { files: ['services/**/*.ts'], rules: { 'no-restricted-syntax': ['error', ...FORBIDDEN_IN_SERVICES] } },
  { files: ['services/*/src/application/**/*.ts'], rules: { 'no-restricted-syntax': ['error', ...FORBIDDEN_IN_APPLICATION] } },
  {
    files: ['**/*.js', '**/*.cjs', '**/*.mjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        process: 'readonly',
        console: 'readonly',
        globalThis: 'readonly',
        setInterval: 'readonly',
        fetch: 'readonly',
        URL: 'readonly',
        URLSearchParams: 'readonly',
        performance: 'readonly',
        setTimeout: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  ...layering,
);
