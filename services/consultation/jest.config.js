module.exports = require('../../jest.preset.js')('consultation', __dirname);
