const path = require('node:path');
const preset = require('../../jest.preset.js')('consultation', __dirname);

// `@mkt/kit/domain` from its source like `@mkt/kit` (else its errors are dist's classes, which
// kit's error handler, read from source, does not recognise). Belongs in jest.preset.js.
preset.moduleNameMapper['^@mkt/kit/domain$'] = path.join(__dirname, '../../packages/kit/src/domain.ts');
module.exports = preset;
