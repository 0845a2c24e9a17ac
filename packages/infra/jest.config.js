module.exports = require('../../jest.preset.js')('infra', __dirname);
