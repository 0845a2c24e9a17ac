// The dead-letter runbook (docs/operations.md, "Dead letters") on the k8s run's cluster, as an
// operator follows it: k8s/jobs/dlq.yaml with its `args` set and the registry before its image, then
// the runbook's own kubectl commands. scripts/k8s-e2e.mjs makes one message dead-letter first: a
// body that is not JSON, published straight to crm.bookings, which the CRM can never read.
import { Buffer } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { amqplib } from '../lib/deps.mjs';

const QUEUE = 'crm.bookings';
const JOB = 'marketplace-dlq';

/**
 * `k8s/jobs/dlq.yaml` as the runbook has it edited: `args` set, the image from the registry (here
 * by digest), and for `replay` the consuming service's own AMQP_URL in place of the administrator's.
 */
export function editedTemplate(root, { args, image, service }) {
  let text = readFileSync(join(root, 'k8s', 'jobs', 'dlq.yaml'), 'utf8');
  const edit = (from, to) => {
    if (!text.includes(from))
      throw new Error(`k8s/jobs/dlq.yaml no longer has ${JSON.stringify(from)}: the runbook and the template differ`);
    text = text.replace(from, to);
  };
  edit('args: [dlq, list]', `args: [${args.join(', ')}]`);
  // Every container's image (the Job's and its wait for the broker).
  edit('image: marketplace-tools:', `image: ${image} # was marketplace-tools:`);
  text = text.replaceAll('image: marketplace-tools:', `image: ${image} # was marketplace-tools:`);
  if (service)
    edit(
      'valueFrom: { secretKeyRef: { name: marketplace-rabbitmq-default-user, key: connection_string } }',
      `valueFrom: { secretKeyRef: { name: marketplace-amqp-${service}, key: url } }`,
    );
  return text;
}

/**
 * Walks the runbook: a poison message dead-lettered on crm.bookings, `dlq list` shows it with its
 * error, `dlq replay --id` sends it back to crm.bookings (as crm's own user) where the CRM reads it
 * again (and, still unreadable, dead-letters it again), `dlq drop --id` removes it. Each step runs
 * the Job template through the runbook's commands. Pushes its rows into `results`.
 */
export async function deadLetterRunbook({ root, work, namespace, kubectl, kn, image, say, results }) {
  const secret = async (name, key) =>
    Buffer.from(await kn(['get', 'secret', name, '-o', `jsonpath={.data.${key.replace(/\./g, '\\.')}}`]), 'base64').toString('utf8');
  // The broker as the script reaches it, a ready endpoint of its Service (the node reaches pod
  // addresses; dev's Service is headless): the dev broker's user.
  const url = new URL(await secret('marketplace-amqp-crm', 'url'));
  const address = await kn([
    'get',
    'endpointslices',
    '-l',
    `kubernetes.io/service-name=${url.hostname}`,
    '-o',
    'jsonpath={.items[0].endpoints[0].addresses[0]}',
  ]);
  if (!address) throw new Error(`dead letters: no endpoint of the Service ${url.hostname}`);
  url.hostname = address;

  // dev and ci have no RabbitMQ operator: the administrator's Secret as the operator writes it
  // (connection_string), made from the dev broker's user (docs/operations.md).
  const adminUrl = await secret('marketplace-amqp-crm', 'url');
  await kubectl(['-n', namespace, 'apply', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'marketplace-rabbitmq-default-user', namespace },
      stringData: { connection_string: adminUrl },
    }),
  });

  const amqp = amqplib(root);
  const connection = await amqp.connect(url.toString());
  const depth = async () => {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined); // a missing queue closes the channel: checkQueue throws
    try {
      return (await channel.checkQueue(`${QUEUE}.dlq`)).messageCount;
    } finally {
      await channel.close().catch(() => undefined);
    }
  };
  const until = async (what, test, ms = 60_000) => {
    const started = Date.now();
    for (;;) {
      const value = await test();
      if (value) return value;
      if (Date.now() - started > ms) throw new Error(`dead letters: ${what} not seen within ${ms / 1000} s`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  const crmDeadLettered = async (messageId) =>
    (await kn(['logs', '-l', 'app.kubernetes.io/name=crm', '--tail=-1', '--max-log-requests=10']))
      .split('\n')
      .filter((line) => line.includes(messageId) && line.includes('message dead-lettered')).length;

  try {
    const before = await depth();
    const messageId = `k8s-e2e-poison-${Date.now()}`;
    const channel = await connection.createConfirmChannel();
    channel.sendToQueue(QUEUE, Buffer.from('not json: a poison message of the k8s run'), {
      messageId,
      persistent: true,
      contentType: 'application/json',
    });
    await channel.waitForConfirms();
    await channel.close();
    await until(`${messageId} in ${QUEUE}.dlq`, async () => (await depth()) > before);
    say(`dead letters: ${messageId} published to ${QUEUE}, dead-lettered by the CRM`);

    // The runbook's commands, as written (docs/operations.md, k8s/jobs/dlq.yaml).
    const job = async (args, service) => {
      const file = join(work, 'dlq-job.yaml');
      writeFileSync(file, editedTemplate(root, { args, image, service }));
      await kubectl(['-n', namespace, 'delete', 'job', JOB, '--ignore-not-found', '--wait=true']);
      await kubectl(['-n', namespace, 'create', '-f', file]);
      const waited = await kubectl(['-n', namespace, 'wait', '--for=condition=complete', `job/${JOB}`, '--timeout=5m'], { check: false });
      const logs = (await kubectl(['-n', namespace, 'logs', `job/${JOB}`], { check: false })).stdout ?? '';
      if (waited.code !== 0)
        throw new Error(`dead letters: the Job [${args.join(' ')}] did not complete: ${waited.stderr?.trim()}\n${logs}`);
      say(`dead letters: [${args.join(' ')}]${service ? ` as ${service}` : ''}:\n${logs.trimEnd()}`);
      return logs;
    };

    const all = await job(['dlq', 'list']);
    const listed = await job(['dlq', 'list', QUEUE]);
    const seen =
      listed.includes(messageId) && /error: The message is not JSON/.test(listed) && new RegExp(`^${QUEUE}\\.dlq\\s+[1-9]`, 'm').test(all);
    results.push([
      'dead letters',
      'the runbook lists the dead letter with its error (dlq Job template)',
      seen ? 'ok' : 'BROKEN',
      seen ? `${messageId} in ${QUEUE}.dlq` : listed.split('\n')[0],
    ]);

    const firstRead = await crmDeadLettered(messageId);
    const replayed = await job(['dlq', 'replay', QUEUE, '--id', messageId], 'crm');
    // Back in crm.bookings, read again by the CRM (unreadable still: dead-lettered again).
    const readAgain = await until(`${messageId} read again by the CRM`, async () => (await crmDeadLettered(messageId)) > firstRead, 60_000)
      .then(() => true)
      .catch(() => false);
    await until(`${messageId} back in ${QUEUE}.dlq`, async () => (await depth()) > before, 30_000).catch(() => undefined);
    const back = replayed.includes(`replayed 1 of`) && replayed.includes(messageId) && readAgain;
    results.push([
      'dead letters',
      "replay sends it back to its queue, where the CRM reads it again (as crm's own user)",
      back ? 'ok' : 'BROKEN',
      back ? `dead-lettered ${firstRead} → ${await crmDeadLettered(messageId)} times` : replayed.split('\n')[0],
    ]);

    const dropped = await job(['dlq', 'drop', QUEUE, '--id', messageId]);
    const gone = await until(`${QUEUE}.dlq back to ${before}`, async () => (await depth()) === before, 30_000)
      .then(() => true)
      .catch(() => false);
    results.push([
      'dead letters',
      'drop removes it, and only it',
      dropped.includes(`dropped 1 of`) && gone ? 'ok' : 'BROKEN',
      `${QUEUE}.dlq: ${await depth()} left`,
    ]);
  } finally {
    await connection.close().catch(() => undefined);
  }
}
