// One jest run over the whole workspace. The servers come from `npm test` (MONGO_URL, AMQP_URL);
// run alone (`pnpm jest`), the global set-up finds or starts them itself.
module.exports = {
  projects: [
    '<rootDir>/packages/*/jest.config.js',
    '<rootDir>/services/*/jest.config.js',
    '<rootDir>/e2e/jest.config.js',
    '<rootDir>/deploy/jest.config.js',
    '<rootDir>/scripts/jest.config.js',
  ],
  testTimeout: 60_000,
  // With two cores jest runs the files in its own process: a fault test that fails half-way can
  // leave a broker channel or a socket open, and the run must still end (with its verdict)
  // rather than wait for CI's limit.
  forceExit: true,
  globalSetup: '<rootDir>/scripts/jest-global-setup.cjs',
  globalTeardown: '<rootDir>/scripts/jest-global-teardown.cjs',
};
