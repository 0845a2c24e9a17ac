module.exports = require('../../jest.preset.js')('wallet', __dirname);
