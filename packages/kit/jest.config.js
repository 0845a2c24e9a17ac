module.exports = require('../../jest.preset.js')('kit', __dirname);
