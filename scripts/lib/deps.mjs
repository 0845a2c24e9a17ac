// Where the operations scripts (backup, restore, reconcile, dlq, migrate-queues) take their
// libraries from: the packages the services run on, resolved through packages that list them as
// production dependencies, so the same resolution works in a development checkout and in the
// tools image (docker/tools.Dockerfile), which holds production dependencies only.
// No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** `require` as seen from `<root>/<dir>/package.json`. */
export const requireFrom = (root, dir) => createRequire(join(root, dir, 'package.json'));

/** The MongoDB driver mongoose brings to the services (wallet's), not a second copy. */
export const mongodb = (root) => createRequire(requireFrom(root, 'services/wallet').resolve('mongoose'))('mongodb');

/** amqplib as packages/kit (the services' bus) has it. */
export const amqplib = (root) => requireFrom(root, 'packages/kit')('amqplib');

/** One of kit's public areas (`db`, `bus`…), built: what the services run. */
export const kitArea = (root, area) => requireFrom(root, 'packages/kit')(`@mkt/kit/${area}`);

/**
 * The TLS options of a MongoDB client for `url`, by the services' rule (kit's `mongoTlsOptions`):
 * with MONGO_TLS_CA_FILE, TLS verified against that CA; a URL turning verification off is refused.
 */
export const mongoTls = (root, url, env = process.env) => kitArea(root, 'db').mongoTlsOptions(url, env.MONGO_TLS_CA_FILE || undefined);

/**
 * The socket options of an AMQP connection to `url`, by the services' rule (kit's `amqpTlsOptions`):
 * with AMQP_TLS_CA_FILE (an `amqps://` url), the broker's certificate verified against that CA.
 */
export const amqpTls = (root, url, env = process.env) => kitArea(root, 'bus').amqpTlsOptions(url, env.AMQP_TLS_CA_FILE || undefined);
