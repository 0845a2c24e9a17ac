// The tests of the scripts (the contract gates): the .mjs modules they import go through SWC as
// CommonJS like the TypeScript does.
const preset = require('../jest.preset.js')('scripts', __dirname);

const swc = ['@swc/jest', { jsc: { target: 'es2024', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } }];
module.exports = { ...preset, transform: { ...preset.transform, '^.+\\.mjs$': swc } };
