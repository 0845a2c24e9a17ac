// The deploy gate against a real registry and real cosign (node --test; `.ci/run` runs it after
// `npm run images`; needs root's podman and the pinned tools, scripts/supply-chain.mjs tools):
// an image is deployed only if its signature, SBOM attestation and provenance attestation verify
// with the project's public key for the digest it has now. Unsigned, signed by another key,
// signed without attestations, or changed and pushed again under the signed tag: refused.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { verifyRecord } from '../supply-chain.mjs';
import { freePort } from '../lib/net.mjs';
import { exec, provenancePredicate, signAndAttest, signingKeys, startRegistry, verifyImage } from '../lib/supply-chain.mjs';

const work = mkdtempSync(join(tmpdir(), 'mkt-image-gate-'));
const LOCAL = 'localhost/mkt-image-gate/app:1';
let registry;
let keys;
let otherKeys;

/** A one-file image (podman import of a tar), pushed to the registry as mkt-image-gate/app:1; its digest. */
async function pushImage(content) {
  const dir = join(work, `rootfs-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'app.txt'), content);
  execFileSync('tar', ['-C', dir, '-cf', `${dir}.tar`, '.']);
  execFileSync('podman', ['import', '--quiet', `${dir}.tar`, LOCAL]);
  const digestFile = join(work, 'digest');
  const ref = `${registry.address}/mkt-image-gate/app:1`;
  execFileSync('podman', ['push', '--quiet', '--tls-verify=false', '--digestfile', digestFile, LOCAL, ref]);
  return execFileSync('cat', [digestFile], { encoding: 'utf8' }).trim();
}

async function attest(ref, withKeys, { attestations = true } = {}) {
  const sbomFile = join(work, 'sbom.spdx.json');
  writeFileSync(
    sbomFile,
    JSON.stringify({ spdxVersion: 'SPDX-2.3', dataLicense: 'CC0-1.0', SPDXID: 'SPDXRef-DOCUMENT', name: 'gate-test', packages: [] }),
  );
  const provenanceFile = join(work, 'provenance.json');
  writeFileSync(
    provenanceFile,
    JSON.stringify(
      provenancePredicate({
        source: 'file:///gate-test',
        revision: '0'.repeat(40),
        command: 'node --test scripts/test/image-gate.test.mjs',
        dockerfile: '-',
        buildArgs: {},
        builder: 'gate-test',
        startedOn: new Date().toISOString(),
        finishedOn: new Date().toISOString(),
        invocationId: 'gate-test',
      }),
    ),
  );
  if (attestations) await signAndAttest(ref, withKeys, { sbomFile, provenanceFile });
  else
    await exec(
      join(process.env.MKT_REGISTRY_CACHE ?? join(process.env.HOME ?? '/root', '.cache', 'mkt-registry'), 'go', 'cosign@v2.6.5', 'cosign'),
      ['sign', '--key', withKeys.key, '--tlog-upload=false', '--allow-insecure-registry', '--allow-http-registry', ref],
      { env: { ...process.env, COSIGN_PASSWORD: withKeys.password, COSIGN_YES: 'true' } },
    );
}

before(async () => {
  registry = await startRegistry({ storage: join(work, 'storage'), log: join(work, 'registry.log'), port: await freePort() });
  keys = await signingKeys(join(work, 'keys'));
  otherKeys = await signingKeys(join(work, 'other-keys'));
});

after(async () => {
  await registry?.stop();
  execFileSync('podman', ['rmi', '-f', LOCAL], { stdio: 'ignore' });
  rmSync(work, { recursive: true, force: true });
});

test('an unsigned image is refused', async () => {
  const digest = await pushImage('unsigned');
  const result = await verifyImage(`${registry.address}/mkt-image-gate/app@${digest}`, keys.pub);
  assert.equal(result.ok, false);
  assert.match(result.reason, /^signature:/);
});

test('an image signed by another key is refused', async () => {
  const digest = await pushImage('signed elsewhere');
  const ref = `${registry.address}/mkt-image-gate/app@${digest}`;
  await attest(ref, otherKeys);
  const result = await verifyImage(ref, keys.pub);
  assert.equal(result.ok, false);
  assert.match(result.reason, /^signature:/);
});

test('a signed image without its SBOM and provenance attestations is refused', async () => {
  const digest = await pushImage('signed, not attested');
  const ref = `${registry.address}/mkt-image-gate/app@${digest}`;
  await attest(ref, keys, { attestations: false });
  const result = await verifyImage(ref, keys.pub);
  assert.equal(result.ok, false);
  assert.match(result.reason, /^sbom attestation:/);
});

test('a signed, attested image passes; changed and pushed again under its tag, it is refused', async () => {
  const digest = await pushImage('the release');
  const ref = `${registry.address}/mkt-image-gate/app@${digest}`;
  await attest(ref, keys);
  assert.deepEqual(await verifyImage(ref, keys.pub), { ok: true, reason: 'signature, SBOM and provenance attestations verified' });
  assert.equal((await verifyImage(`${registry.address}/mkt-image-gate/app:1`, keys.pub)).ok, true);

  // Modified after signing and re-tagged: the tag now names other content, which nobody signed.
  const changed = await pushImage('the release, changed after signing');
  assert.notEqual(changed, digest);
  const byTag = await verifyImage(`${registry.address}/mkt-image-gate/app:1`, keys.pub);
  assert.equal(byTag.ok, false);
  assert.match(byTag.reason, /^signature:/);
  // The deploy gate (the record of release/images.json's shape) refuses the changed digest.
  const record = (d) => ({
    registry: registry.address,
    publicKey: keys.pub,
    images: { app: { repository: 'mkt-image-gate/app', digest: d } },
  });
  await assert.rejects(verifyRecord(record(changed), { log: () => undefined }), /refused 1 image\(s\): app: signature:/);
  await verifyRecord(record(digest), { log: () => undefined });
});
