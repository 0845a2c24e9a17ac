'use strict';
// `@mkt/kit/domain`: the pure part of kit (errors) for a service's `domain/`; the same module
// instance as `@mkt/kit`'s exports.
module.exports = require('./dist/domain');
