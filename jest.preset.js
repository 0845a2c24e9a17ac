// Shared jest settings: TypeScript through SWC (no type check here; `tsc -b` does that), and the
// workspace packages read from their sources so tests never need a build of them.
const path = require('node:path');

const root = __dirname;

module.exports = function preset(displayName, dir) {
  return {
    displayName,
    rootDir: dir,
    testEnvironment: 'node',
    testMatch: ['<rootDir>/test/**/*.test.ts'],
    transform: {
      '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2024', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
    },
    moduleNameMapper: {
      '^@mkt/contracts$': path.join(root, 'packages/contracts/src/index.ts'),
      // contracts' schema-free areas, as its exports map names them (packages/contracts/package.json).
      '^@mkt/contracts/([a-z-]+)$': path.join(root, 'packages/contracts/src/entries/$1.ts'),
      // kit by area, as its exports map names them (packages/kit/package.json).
      '^@mkt/kit/([a-z-]+)$': path.join(root, 'packages/kit/src/entries/$1.ts'),
      '^@mkt/infra$': path.join(root, 'packages/infra/src/index.ts'),
      '^@mkt/client$': path.join(root, 'packages/client/src/index.ts'),
    },
  };
};
