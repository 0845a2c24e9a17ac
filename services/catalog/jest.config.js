module.exports = require('../../jest.preset.js')('catalog', __dirname);
