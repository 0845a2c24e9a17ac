module.exports = require('../../jest.preset.js')('client', __dirname);
