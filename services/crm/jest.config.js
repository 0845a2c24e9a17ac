module.exports = require('../../jest.preset.js')('crm', __dirname);
