// The scripts' ES modules the tests share (scripts/system-env.mjs, scripts/lib/seed.mjs) go
// through SWC as CommonJS like the TypeScript does (as in scripts/jest.config.js).
const preset = require('../jest.preset.js')('e2e', __dirname);

const swc = ['@swc/jest', { jsc: { target: 'es2024', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } }];
module.exports = { ...preset, transform: { ...preset.transform, '^.+\\.mjs$': swc } };
