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
