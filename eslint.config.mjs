import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const SERVICES = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];

/** Imports no file of `service` may make: another service's code, by relative path or package name. */
const otherServices = (service) => {
  const others = SERVICES.filter((name) => name !== service).join('|');
  return [
    {
      regex: `^(\\.\\./)+(services/)?(${others})(/|$)`,
      message: 'A service never imports another service’s code: share through @mkt/contracts or events (DESIGN §1).',
    },
    { regex: `^@mkt/(${others})(/|$)`, message: 'A service never imports another service’s code (DESIGN §1).' },
  ];
};

/** One direction: http → domain → db (issue 13). Type imports are allowed everywhere. */
const LAYERS = {
  db: {
    patterns: [
      { regex: '^(\\.\\./)+(domain|http)(/|$)', message: 'db is the bottom layer: it answers outcomes, the domain decides (issue 13).' },
    ],
    paths: [],
  },
  domain: {
    patterns: [{ regex: '^(\\.\\./)+http(/|$)', message: 'The domain knows no HTTP (issue 13).' }],
    paths: [{ name: 'express', message: 'The domain knows no express (issue 13).' }],
  },
  http: {
    patterns: [{ regex: '^(\\.\\./)+db(/|$)', message: 'Routers call the domain, not the database (types are fine) (issue 13).' }],
    paths: [],
  },
};

/** typescript-eslint takes `allowTypeImports` per path and pattern: a type-only import is never a dependency at run time. */
const restrict = (patterns, paths = []) => ({
  '@typescript-eslint/no-restricted-imports': [
    'error',
    {
      paths: paths.map((path) => ({ ...path, allowTypeImports: true })),
      patterns: patterns.map((pattern) => ({ ...pattern, allowTypeImports: true })),
    },
  ],
});

// Flat config does not merge a rule's options across blocks: each layer's block repeats the
// service-wide patterns.
// The one exception, to be removed by consultation's owners: its paid-booking tests run the
// wallet in the same process (its composition and models), a test of the two together.
const CROSS_SERVICE_EXCEPTIONS = { consultation: ['services/consultation/test/**'] };

/**
 * Routers come from kit's `serviceRouter()` (case-sensitive, strict, as `createService`
 * promises): a plain `express.Router()` let `/wallets/USERS/X/topup` reach its handler (issue 20).
 */
const NO_EXPRESS_ROUTER = {
  name: 'express',
  importNames: ['Router'],
  message: 'Use serviceRouter() from @mkt/kit: case-sensitive and strict like the app (issue 20).',
};

const layering = SERVICES.flatMap((service) => [
  {
    files: [`services/${service}/**/*.ts`],
    ignores: CROSS_SERVICE_EXCEPTIONS[service] ?? [],
    rules: restrict(otherServices(service), [NO_EXPRESS_ROUTER]),
  },
  ...Object.entries(LAYERS).map(([layer, rule]) => ({
    files: [`services/${service}/src/${layer}/**/*.ts`],
    rules: restrict([...rule.patterns, ...otherServices(service)], [...rule.paths, NO_EXPRESS_ROUTER]),
  })),
]);

/** Syntax no code may use: each entry names the incident that made it a rule. */
const FORBIDDEN_SYNTAX = [
  {
    selector: "Property[key.name='err'][value.type='MemberExpression'][value.property.name='message']",
    message: 'Log the error object ({ err }): its message alone drops the stack (issue 20).',
  },
  {
    selector: "Property[key.name='err'] > ChainExpression > MemberExpression[property.name='message']",
    message: 'Log the error object ({ err }): its message alone drops the stack (issue 20).',
  },
];
const FORBIDDEN_IN_SERVICES = [
  ...FORBIDDEN_SYNTAX,
  {
    selector: "CallExpression[callee.object.name='express'][callee.property.name='Router']",
    message: 'Use serviceRouter() from @mkt/kit: case-sensitive and strict like the app (issue 20).',
  },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.tools/**', '.dev/**', 'coverage/**'] },
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
    },
  },
  { files: ['services/**/*.ts'], rules: { 'no-restricted-syntax': ['error', ...FORBIDDEN_IN_SERVICES] } },
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
