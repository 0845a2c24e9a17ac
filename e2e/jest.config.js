module.exports = require('../jest.preset.js')('e2e', __dirname);
