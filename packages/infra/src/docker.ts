import type { StartedTestContainer } from 'testcontainers';
import { waitForAmqp, type BrokerHandle } from './rabbit';
import { freePort, run, which } from './process';
import type { LocalServer } from './mongo';

export async function dockerAnswers(): Promise<boolean> {
  if (!which('docker')) return false;
  try {
    await run('docker', ['info', '--format', '{{.ServerVersion}}'], { timeoutMs: 5_000 });
    return true;
  } catch {
    return false;
  }
}

// Loaded only when a Docker engine answers: the rest of the infra needs none of it.
const testcontainers = () => import('testcontainers');

/** The images production runs (docker-compose.yml and k8s/ pin the same versions). */
export const MONGO_IMAGE = 'mongo:8.0.29';
export const RABBIT_IMAGE = 'rabbitmq:4.2.9-management';

export async function startMongoContainer(): Promise<LocalServer> {
  const { GenericContainer, Wait } = await testcontainers();
  const container = await new GenericContainer(MONGO_IMAGE)
    .withExposedPorts(27017)
    .withWaitStrategy(Wait.forLogMessage(/Waiting for connections/))
    .start();
  const port = container.getMappedPort(27017);
  return {
    url: `mongodb://${container.getHost()}:${port}/`,
    description: `${MONGO_IMAGE} container ${container.getId().slice(0, 12)} on port ${port}`,
    stop: async () => {
      await container.stop();
    },
  };
}

/** A RabbitMQ container on a fixed host port, so a stop and start keep its address. */
export async function startRabbitContainer(image = RABBIT_IMAGE): Promise<BrokerHandle> {
  const { GenericContainer, Wait } = await testcontainers();
  const hostPort = await freePort();
  const container: StartedTestContainer = await new GenericContainer(image)
    .withExposedPorts({ container: 5672, host: hostPort })
    .withWaitStrategy(Wait.forLogMessage(/Server startup complete/))
    .start();
  const id = container.getId();
  return {
    url: `amqp://guest:guest@${container.getHost()}:${hostPort}`,
    description: `${image} container ${id.slice(0, 12)} on port ${hostPort}`,
    stopBroker: async () => {
      await run('docker', ['stop', id]);
    },
    startBroker: async () => {
      await run('docker', ['start', id]);
      await waitForAmqp(`amqp://guest:guest@${container.getHost()}:${hostPort}`, 60_000);
    },
    stop: async () => {
      await container.stop();
    },
    ctl: (args, input) => run('docker', ['exec', ...(input === undefined ? [] : ['-i']), id, 'rabbitmqctl', ...args], { input }),
  };
}
