module.exports = require('../../jest.preset.js')('review', __dirname);
