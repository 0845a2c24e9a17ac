module.exports = require('../jest.preset.js')('deploy', __dirname);
