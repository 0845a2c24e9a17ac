#!/usr/bin/env node
// The operations commands in one place: the entry point of the tools image (`marketplace-tools`,
// docker/tools.Dockerfile) and, in a checkout, `node scripts/tools.mjs <command> …`.
//
//   marketplace-tools backup [options]           scripts/backup.mjs backup (dump, encrypt, copy to S3, retention)
//   marketplace-tools restore <folder|s3://…>    scripts/backup.mjs restore
//   marketplace-tools reconcile [--dry-run]      scripts/reconcile.mjs (after a restore)
//   marketplace-tools dlq list|replay|drop …     scripts/dlq.mjs (dead letters)
//   marketplace-tools migrate-queues [service…]  scripts/migrate-queues.mjs (classic → quorum queues)
//   marketplace-tools age … / age-keygen …       the pinned age release (encryption of backups)
//
// Each command takes `--help`. The command runs as a child process with this one's standard
// streams; its exit status is this one's, and SIGTERM/SIGINT are passed on to it.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const node = (script, ...fixed) => ({ file: process.execPath, args: [join(here, script), ...fixed] });

export const COMMANDS = {
  backup: { ...node('backup.mjs', 'backup'), about: 'dump every service database (encrypted with age; copied to S3 when configured)' },
  restore: { ...node('backup.mjs', 'restore'), about: 'restore a backup folder or s3://bucket/prefix/name into empty databases' },
  reconcile: { ...node('reconcile.mjs'), about: 'after a restore: mend what the databases’ different moments left' },
  dlq: { ...node('dlq.mjs'), about: 'list, replay or drop dead letters' },
  'migrate-queues': { ...node('migrate-queues.mjs'), about: 'move classic queues to the quorum queues this version declares' },
  age: { tool: 'age', about: 'the pinned age release' },
  'age-keygen': { tool: 'age-keygen', about: 'makes an age identity (the private key) and prints its recipient' },
};

const USAGE = `usage: marketplace-tools <command> [arguments]   (each command takes --help)
${Object.entries(COMMANDS)
  .map(([name, { about }]) => `  ${name.padEnd(15)} ${about}`)
  .join('\n')}`;

/** The binary of a pinned age tool: $AGE's directory (the image sets it), else installed with Go. */
async function ageTool(name) {
  if (process.env.AGE) return join(dirname(process.env.AGE), name);
  const { ensureGoTool } = await import('./lib/go-tools.mjs');
  return ensureGoTool(join(here, '..', '.tools'), name, { module: `filippo.io/age/cmd/${name}`, version: 'v1.3.2' });
}

async function main(argv) {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`unknown command ${name}\n${USAGE}\n`);
    return 2;
  }
  const [file, fixed] = command.tool ? [await ageTool(command.tool), []] : [command.file, command.args];
  // age answers --help on stderr with exit 2: a usage shown on request is a success.
  const helpOnly = command.tool && args.length === 1 && ['--help', '-h'].includes(args[0]);
  const child = spawn(file, [...fixed, ...args], { stdio: helpOnly ? ['inherit', 'inherit', 'pipe'] : 'inherit' });
  if (helpOnly) child.stderr?.pipe(process.stdout);
  for (const signal of /** @type {const} */ (['SIGTERM', 'SIGINT'])) process.on(signal, () => child.kill(signal));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(helpOnly ? 0 : (code ?? 128 + (signal === 'SIGKILL' ? 9 : 15))));
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`marketplace-tools: ${err.message}\n`);
    process.exit(1);
  },
);
