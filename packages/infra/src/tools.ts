import { join } from 'node:path';
import { isRoot, run, which, type Say } from './process';

export const KUSTOMIZE_MODULE = 'sigs.k8s.io/kustomize/kustomize/v5@v5.7.1';

/** kustomize on PATH or in the Go bin folder, else installed with `go install` (pinned). */
export async function ensureKustomize(say: Say = () => undefined): Promise<string> {
  const go = which('go', ['/usr/local/go/bin']);
  const goBin = go ? join((await run(go, ['env', 'GOPATH'])).trim(), 'bin') : null;
  const found = which('kustomize', goBin ? [goBin] : []);
  if (found) return found;
  if (!go || !goBin)
    throw new Error('kustomize is not installed and there is no Go to install it with (go install ' + KUSTOMIZE_MODULE + ')');
  say(`installing ${KUSTOMIZE_MODULE}`);
  await run(go, ['install', KUSTOMIZE_MODULE]);
  return join(goBin, 'kustomize');
}

/** Debian's Chromium for the browser tests: found, or installed with apt-get when root. */
export async function ensureChromium(say: Say = () => undefined): Promise<string> {
  const found = which('chromium') ?? which('chromium-browser');
  if (found) return found;
  if (!isRoot() || !which('apt-get')) throw new Error('Chromium is not installed (Debian/Ubuntu: apt-get install chromium)');
  say('installing chromium with apt-get');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await run('apt-get', ['update', '-qq'], { env });
  await run('apt-get', ['install', '-y', '-qq', 'chromium'], { env });
  const installed = which('chromium');
  if (!installed) throw new Error('apt-get installed chromium but it is not on PATH');
  return installed;
}
