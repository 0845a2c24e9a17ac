import { createHash, randomBytes } from 'node:crypto';
import { BUS_SERVICES, busPermissions, busUserOf, type Service } from '@mkt/contracts/bus-access';

/** A broker user of one service: its name and password (never logged). */
export interface BusUser {
  service: Service;
  user: string;
  password: string;
}

/** The broker users of one run: each service's own, and the template consumers check `user-id` with. */
export interface BusUsers {
  /** BUS_PUBLISHER_USERS: the user of every service, `{service}` standing for its name. */
  publisherUsers: string;
  users: BusUser[];
  /** The AMQP URL of a service: the broker's address with that service's user. */
  urlOf: (service: string) => string;
}

/** Runs `rabbitmqctl` against one broker with these arguments (`input` on its stdin); resolves with its output. */
export type RabbitCtl = (args: string[], input?: string) => Promise<string>;

/**
 * A user per service, named after the template (`mkt_<random>_{service}` unless given: unique on
 * a broker other runs share), each with a random password.
 */
export function newBusUsers(brokerUrl: string, template = `mkt_${randomBytes(4).toString('hex')}_{service}`): BusUsers {
  const users = BUS_SERVICES.map((service) => ({
    service,
    user: busUserOf(template, service),
    password: randomBytes(18).toString('base64url'),
  }));
  return {
    publisherUsers: template,
    users,
    urlOf: (service) => {
      const found = users.find((entry) => entry.service === service);
      if (!found) throw new Error(`No broker user for ${service}`);
      const url = new URL(brokerUrl);
      url.username = encodeURIComponent(found.user);
      url.password = encodeURIComponent(found.password);
      return url.toString().replace(/\/$/, '');
    },
  };
}

/** RabbitMQ's `rabbit_password_hashing_sha256`: base64(salt ‖ sha256(salt ‖ password)), a 4-byte salt. */
export function rabbitPasswordHash(password: string, salt: Buffer = randomBytes(4)): string {
  const digest = createHash('sha256')
    .update(Buffer.concat([salt, Buffer.from(password, 'utf8')]))
    .digest();
  return Buffer.concat([salt, digest]).toString('base64');
}

/**
 * The RabbitMQ definitions (`rabbitmqctl import_definitions`, or `load_definitions` at boot) of
 * these users on vhost `/`: no tags (no management access), the permissions and the topic
 * permissions of `busPermissions` — each may publish only its own events. Importing adds or
 * updates these users only: the default user and the others stay as they are.
 */
export function busDefinitions(users: readonly BusUser[], namespace = '') {
  return {
    users: users.map(({ user, password }) => ({
      name: user,
      password_hash: rabbitPasswordHash(password),
      hashing_algorithm: 'rabbit_password_hashing_sha256',
      tags: [],
    })),
    permissions: users.map(({ service, user }) => {
      const { configure, write, read } = busPermissions(service, namespace);
      return { user, vhost: '/', configure, write, read };
    }),
    topic_permissions: users.map(({ service, user }) => {
      const { exchange, write, read } = busPermissions(service, namespace).topic;
      return { user, vhost: '/', exchange, write, read };
    }),
  };
}

/**
 * Creates the users on a broker this process administers, in one `import_definitions` read from
 * its standard input (password hashes only, in no file and no argument).
 */
export async function provisionBusUsers(ctl: RabbitCtl, brokerUrl: string, template?: string): Promise<BusUsers> {
  const busUsers = newBusUsers(brokerUrl, template);
  await ctl(['import_definitions', '--format', 'json'], JSON.stringify(busDefinitions(busUsers.users)));
  return busUsers;
}

/** The permissions each user is given (for the checks of the deployment files). */
export { busPermissions };
