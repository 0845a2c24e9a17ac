'use strict';
// `@mkt/kit/tracing`: the tracing module alone, without the rest of kit (express, mongoose,
// amqplib), so that a service's `main.ts` can start tracing before anything it instruments is
// loaded. The same module instance as `@mkt/kit`'s exports.
module.exports = require('./dist/tracing');
