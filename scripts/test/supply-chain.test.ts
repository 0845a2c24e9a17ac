import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// The overlays' images by registry and digest, from the record `npm run images` writes
// (scripts/lib/supply-chain.mjs); the signature gate itself runs against a real registry and
// cosign in scripts/test/image-gate.test.mjs (npm run test:image-gate).
type Record = { registry: string; images: { [name: string]: { repository: string; digest: string } } };
type Entry = { name: string; newName: string; digest: string };
// eslint-disable-next-line @typescript-eslint/no-require-imports -- an ES module, loaded through SWC as CommonJS (scripts/jest.config.js)
const { kustomizeImages, imagesYaml, provenancePredicate, statement } = require('../lib/supply-chain.mjs') as {
  kustomizeImages: (record: Record, names: { [from: string]: string }) => Entry[];
  imagesYaml: (entries: Entry[]) => string[];
  provenancePredicate: (input: object) => {
    buildDefinition: { resolvedDependencies: { uri: string; digest: { gitCommit: string } }[]; externalParameters: { command: string } };
    runDetails: { builder: { id: string } };
  };
  statement: (name: string, digest: string, type: string, predicate: object) => { subject: { digest: { sha256: string } }[] };
};

const root = join(__dirname, '..', '..');
const digest = `sha256:${'a'.repeat(64)}`;
const record: Record = {
  registry: '127.0.0.1:5055',
  images: {
    'marketplace/wallet': { repository: 'marketplace/wallet', digest },
    'marketplace-standin/rabbitmq': { repository: 'marketplace-standin/rabbitmq', digest },
  },
};

describe('images by registry and digest', () => {
  test('each manifest name becomes the registry’s repository at the recorded digest', () => {
    const entries = kustomizeImages(record, { 'marketplace/wallet': 'marketplace/wallet', rabbitmq: 'marketplace-standin/rabbitmq' });
    expect(entries).toEqual([
      { name: 'marketplace/wallet', newName: '127.0.0.1:5055/marketplace/wallet', digest },
      { name: 'rabbitmq', newName: '127.0.0.1:5055/marketplace-standin/rabbitmq', digest },
    ]);
    expect(imagesYaml(entries)).toEqual([
      'images:',
      `  - { name: marketplace/wallet, newName: 127.0.0.1:5055/marketplace/wallet, digest: '${digest}' }`,
      `  - { name: rabbitmq, newName: 127.0.0.1:5055/marketplace-standin/rabbitmq, digest: '${digest}' }`,
    ]);
  });

  test('an image that was not pushed, or has no digest, is an error, never a tag', () => {
    expect(() => kustomizeImages(record, { 'marketplace/crm': 'marketplace/crm' })).toThrow(/marketplace\/crm: not in the record/);
    const noDigest = { ...record, images: { 'marketplace/wallet': { repository: 'marketplace/wallet', digest: 'latest' } } };
    expect(() => kustomizeImages(noDigest, { 'marketplace/wallet': 'marketplace/wallet' })).toThrow(/no digest recorded/);
  });

  test('the provenance names the commit, the command and the builder; the statement the digest', () => {
    const predicate = provenancePredicate({
      source: 'https://example.invalid/marketplace.git',
      revision: 'b'.repeat(40),
      command: 'npm run images',
      dockerfile: 'docker/service.Dockerfile',
      buildArgs: { SERVICE: 'wallet' },
      builder: 'marketplace/.ci/run',
      startedOn: '2026-01-01T00:00:00Z',
      finishedOn: '2026-01-01T00:01:00Z',
      invocationId: 'x',
    });
    expect(predicate.buildDefinition.resolvedDependencies).toEqual([
      { uri: 'git+https://example.invalid/marketplace.git', digest: { gitCommit: 'b'.repeat(40) } },
    ]);
    expect(predicate.buildDefinition.externalParameters.command).toBe('npm run images');
    expect(predicate.runDetails.builder.id).toBe('marketplace/.ci/run');
    expect(statement('r/marketplace/wallet', digest, 'https://slsa.dev/provenance/v1', predicate).subject[0]?.digest.sha256).toBe(
      'a'.repeat(64),
    );
  });

  test('pin writes an overlay’s images: by registry and digest, replacing the block it had', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mkt-pin-'));
    try {
      const services = ['gateway', 'wallet', 'catalog', 'crm', 'consultation', 'review'];
      const full = {
        registry: 'registry.example:5000',
        images: Object.fromEntries(services.map((s) => [`marketplace/${s}`, { repository: `marketplace/${s}`, digest }])),
      };
      writeFileSync(join(dir, 'images.json'), JSON.stringify(full));
      const overlay = join(dir, 'overlay');
      execFileSync('mkdir', [overlay]);
      writeFileSync(
        join(overlay, 'kustomization.yaml'),
        ['resources: [../base]', 'images:', "  - { name: marketplace/wallet, newTag: '0.1.0' }", 'patches: []', ''].join('\n'),
      );
      execFileSync(process.execPath, [join(root, 'scripts/supply-chain.mjs'), 'pin', overlay, '--record', join(dir, 'images.json')]);
      const text = readFileSync(join(overlay, 'kustomization.yaml'), 'utf8');
      expect(text).toContain(`  - { name: marketplace/wallet, newName: registry.example:5000/marketplace/wallet, digest: '${digest}' }`);
      expect(text).not.toContain('newTag');
      expect(text.split('\n')[0]).toBe('resources: [../base]');
      expect(text).toContain('patches: []');
      expect(text.match(/^ {2}- \{ name: marketplace\//gm) ?? []).toHaveLength(6);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('pin with a record of some images pins those and keeps the other lines and comments as they were', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mkt-pin-'));
    try {
      const partial = { registry: 'registry.example:5000', images: { 'marketplace/wallet': { repository: 'marketplace/wallet', digest } } };
      writeFileSync(join(dir, 'images.json'), JSON.stringify(partial));
      const overlay = join(dir, 'overlay');
      execFileSync('mkdir', [overlay]);
      const before = [
        'resources: [../base]',
        'images:',
        "  - { name: marketplace/gateway, newTag: '0.2.0', digest: 'sha256:" + 'c'.repeat(64) + "' }",
        "  - { name: marketplace/wallet, newTag: '0.2.1' }",
        '  # The operations image.',
        "  - { name: marketplace-tools, newTag: '0.1.0' }",
        'patches: []',
        '',
      ];
      writeFileSync(join(overlay, 'kustomization.yaml'), before.join('\n'));
      const out = execFileSync(
        process.execPath,
        [join(root, 'scripts/supply-chain.mjs'), 'pin', overlay, '--record', join(dir, 'images.json')],
        {
          encoding: 'utf8',
        },
      );
      expect(out).toContain('kept as they were');
      const text = readFileSync(join(overlay, 'kustomization.yaml'), 'utf8').split('\n');
      expect(text).toEqual([
        ...before.slice(0, 3),
        `  - { name: marketplace/wallet, newName: registry.example:5000/marketplace/wallet, digest: '${digest}' }`,
        ...before.slice(4),
      ]);

      // A multi-line entry is not rewritten half-way: refused, the file unchanged.
      const multi = ['images:', '  - name: marketplace/wallet', "    newTag: '0.2.1'", ''].join('\n');
      writeFileSync(join(overlay, 'kustomization.yaml'), multi);
      const refused = spawnSync(
        process.execPath,
        [join(root, 'scripts/supply-chain.mjs'), 'pin', overlay, '--record', join(dir, 'images.json')],
        {
          encoding: 'utf8',
        },
      );
      expect(refused.status).toBe(1);
      expect(refused.stdout).toMatch(/one-line entries/);
      expect(readFileSync(join(overlay, 'kustomization.yaml'), 'utf8')).toBe(multi);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
