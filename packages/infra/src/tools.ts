import { join } from 'node:path';
import { run, which, type Say } from './process';

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
