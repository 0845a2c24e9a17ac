#!/usr/bin/env node
// The images' supply chain from the command line (docs/releasing.md "Images", k8s/README.md):
//
//   node scripts/supply-chain.mjs tools              # build the pinned registry, cosign and syft (cached)
//   node scripts/supply-chain.mjs registry           # run the local registry in the foreground
//   node scripts/supply-chain.mjs verify             # the deploy gate: every image of release/images.json
//   node scripts/supply-chain.mjs pin <overlay> [--registry HOST] [--record FILE]
//                                                    # write the overlay's `images:` by registry and digest
//                                                    # (--registry: where the images were copied by digest)
//
// `npm run images` pushes, attests and signs (scripts/containers.mjs publish); `npm run k8s:e2e`
// verifies before it deploys. Plain Node (20 or 24).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureTool, imagesYaml, kustomizeImages, readRecord, startRegistry, TOOLS, verifyImage } from './lib/supply-chain.mjs';
import { messageOf } from './lib/errors.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const RECORD = join(root, 'release', 'images.json');
const REGISTRY_DIR = join(root, '.dev', 'registry');
const say = (line) => console.log(`[supply-chain] ${line}`);

/** The names the manifests give the images (k8s/base) and the repository each is pushed to. */
export const MANIFEST_NAMES = {
  'marketplace/gateway': 'marketplace/gateway',
  'marketplace/wallet': 'marketplace/wallet',
  'marketplace/catalog': 'marketplace/catalog',
  'marketplace/crm': 'marketplace/crm',
  'marketplace/consultation': 'marketplace/consultation',
  'marketplace/review': 'marketplace/review',
  'marketplace-tools': 'marketplace-tools',
};

/**
 * Verifies every image of the record (or `only` of them) by digest with the record's public key
 * (or $COSIGN_PUBLIC_KEY); throws naming each one refused.
 * @param {any} record the record of the images (release/images.json's shape)
 * @param {{ only?: string[], pub?: string, log?: (line: string) => void }} [options]
 */
export async function verifyRecord(record, { only, pub = process.env.COSIGN_PUBLIC_KEY ?? record.publicKey, log = say } = {}) {
  const refused = [];
  for (const [name, image] of Object.entries(record.images)) {
    if (only && !only.includes(name)) continue;
    const ref = `${record.registry}/${image.repository}@${image.digest}`;
    const result = await verifyImage(ref, pub);
    log(`${result.ok ? 'verified' : 'REFUSED '} ${ref.slice(0, ref.indexOf('@') + 20)}…: ${result.reason}`);
    if (!result.ok) refused.push(`${name}: ${result.reason}`);
  }
  if (refused.length > 0) throw new Error(`refused ${refused.length} image(s): ${refused.join('; ')}`);
}

/**
 * Pins the overlay's images (`<overlay>/kustomization.yaml`'s `images:` block, appended when it has
 * none) by registry and digest, each image the record has: its line is replaced, or added. An
 * image the record does not have (a record of one `--only` build) keeps its line as it was, and
 * so do the block's comments.
 * @param {string} overlay
 * @param {{ record?: string, registry?: string }} [options]
 */
function pin(overlay, { record: recordFile = RECORD, registry } = {}) {
  const file = join(overlay, 'kustomization.yaml');
  const record = readRecord(recordFile);
  if (registry) record.registry = registry;
  const recorded = Object.fromEntries(Object.entries(MANIFEST_NAMES).filter(([, repository]) => record.images[repository]));
  if (Object.keys(recorded).length === 0) throw new Error(`${recordFile} records none of the manifests' images`);
  const pinned = new Map(kustomizeImages(record, recorded).map((entry) => [entry.name, imagesYaml([entry])[1]]));
  const lines = readFileSync(file, 'utf8').split('\n');
  let start = lines.findIndex((line) => line.startsWith('images:'));
  if (start < 0) {
    start = lines.length - (lines.at(-1) === '' ? 1 : 0);
    lines.splice(start, 0, 'images:');
  }
  let end = start + 1;
  while (end < lines.length && (lines[end].startsWith('  ') || lines[end].startsWith('- '))) end += 1;
  const kept = [];
  const block = lines.slice(start + 1, end).map((line) => {
    if (line.trim() === '' || line.trimStart().startsWith('#')) return line;
    const name = /^ *- \{ *name: *['"]?([^,'"\s}]+)/.exec(line)?.[1];
    if (!name) throw new Error(`${file}: pin rewrites one-line entries of images: ({ name: …, … }), not "${line.trim()}"`);
    const replacement = pinned.get(name);
    if (!replacement) {
      kept.push(name);
      return line;
    }
    pinned.delete(name);
    return replacement;
  });
  block.push(...pinned.values());
  lines.splice(start + 1, end - start - 1, ...block);
  writeFileSync(file, lines.join('\n'));
  say(`${file}: ${Object.keys(recorded).length} images pinned by digest (${record.registry})`);
  if (kept.length > 0) say(`kept as they were (not in ${recordFile}): ${kept.join(', ')}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [command, ...rest] = process.argv.slice(2);
  try {
    if (command === 'tools') {
      for (const name of rest.length ? rest : Object.keys(TOOLS)) {
        const started = Date.now();
        const file = ensureTool(name, say);
        say(`${name} ${TOOLS[name].version}: ${file} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
      }
    } else if (command === 'registry') {
      const registry = await startRegistry({ storage: join(REGISTRY_DIR, 'storage'), log: join(REGISTRY_DIR, 'registry.log') });
      say(`registry on ${registry.address} (Ctrl-C stops it)`);
      process.once('SIGINT', () => void registry.stop().then(() => process.exit(0)));
      process.once('SIGTERM', () => void registry.stop().then(() => process.exit(0)));
    } else if (command === 'verify') {
      if (!existsSync(RECORD)) throw new Error('release/images.json is missing: npm run images pushes and records the images');
      const record = readRecord(RECORD);
      const registry = await startRegistry({ storage: join(REGISTRY_DIR, 'storage'), log: join(REGISTRY_DIR, 'registry.log') });
      try {
        await verifyRecord(record, { only: rest.length ? rest : undefined });
      } finally {
        await registry.stop();
      }
    } else if (command === 'pin' && rest[0]) {
      const flag = (name) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
      pin(rest[0], { record: flag('--record'), registry: flag('--registry') });
    } else {
      console.error(
        'usage: node scripts/supply-chain.mjs tools [name…] | registry | verify [image…] | pin <overlay folder> [--registry HOST] [--record FILE]',
      );
      process.exit(2);
    }
  } catch (err) {
    say(`FAILED: ${messageOf(err)}`);
    process.exit(1);
  }
}
