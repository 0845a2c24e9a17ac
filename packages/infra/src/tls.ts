import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, which } from './process';
import type { BrokerTlsFiles } from './rabbit';

/** A test's certificates: a CA, a server certificate it signed, and a CA that signed nothing here. */
export interface TestCertificates extends BrokerTlsFiles {
  /** A CA of its own that did not sign the server's certificate: a client trusting it must refuse. */
  otherCaFile: string;
  /** Removes the files. */
  remove: () => void;
}

/**
 * Makes a CA and a server certificate for 127.0.0.1 and localhost signed by it, with Debian's
 * `openssl`, in a temporary folder of their own (EC P-256 keys, valid for a day).
 */
export async function makeTestCertificates(): Promise<TestCertificates> {
  const openssl = which('openssl');
  if (!openssl) throw new Error('openssl is not on PATH (Debian: apt-get install openssl)');
  const dir = mkdtempSync(join(tmpdir(), 'mkt-tls-'));
  const file = (name: string) => join(dir, name);
  const ca = async (name: string, subject: string) => {
    await run(openssl, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file(`${name}.key`)]);
    await run(openssl, ['req', '-x509', '-new', '-key', file(`${name}.key`), '-subj', subject, '-days', '1', '-out', file(`${name}.crt`)]);
  };
  try {
    await ca('ca', '/CN=marketplace test CA');
    await ca('other-ca', '/CN=another test CA');
    await run(openssl, ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', file('server.key')]);
    await run(openssl, ['req', '-new', '-key', file('server.key'), '-subj', '/CN=localhost', '-out', file('server.csr')]);
    writeFileSync(file('server.ext'), 'subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth\n');
    await run(openssl, [
      'x509',
      '-req',
      '-in',
      file('server.csr'),
      '-CA',
      file('ca.crt'),
      '-CAkey',
      file('ca.key'),
      '-CAcreateserial',
      '-days',
      '1',
      '-extfile',
      file('server.ext'),
      '-out',
      file('server.crt'),
    ]);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    caFile: file('ca.crt'),
    certFile: file('server.crt'),
    keyFile: file('server.key'),
    otherCaFile: file('other-ca.crt'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
