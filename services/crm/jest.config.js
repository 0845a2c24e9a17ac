const path = require('node:path');

const preset = require('../../jest.preset.js')('crm', __dirname);
// `@mkt/kit/domain` from kit's sources, as `@mkt/kit` is: one module instance of the errors, so
// the error handler knows a rule's AppError (the built entry would be a second, foreign class).
module.exports = {
  ...preset,
  moduleNameMapper: { '^@mkt/kit/domain$': path.join(__dirname, '../../packages/kit/src/domain.ts'), ...preset.moduleNameMapper },
};
