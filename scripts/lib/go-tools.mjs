// Pinned Go tools, installed with `go install <module>@<version>` through the Go module proxy into
// .tools/go/<name>@<version>/ the first time they are needed (nothing is fetched from GitHub).
// Shared by deploy/check-k8s.mjs (kustomize, kubeconform, kube-score) and scripts/contracts.mjs
// (oasdiff). No `import.meta` here: the jest tests load this module through SWC as CommonJS.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const run = (file, args, options = {}) =>
  execFileSync(file, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['pipe', 'pipe', 'pipe'], ...options });

/** The Go toolchain: $GO, /usr/local/go/bin/go or `go` on the PATH. */
export function go() {
  for (const candidate of [process.env.GO || undefined, '/usr/local/go/bin/go', 'go'].filter((name) => name !== undefined)) {
    try {
      run(candidate, ['version']);
      return candidate;
    } catch {
      // next
    }
  }
  throw new Error('Go is needed to install the pinned tools (https://go.dev/dl/)');
}

export const goEnv = () => ({ ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: process.env.GOTOOLCHAIN ?? 'local' });

/**
 * The pinned tool's binary, `<toolsDir>/go/<name>@<version>/<name>`, installed when missing.
 * `tool`: `{ module, version }`; `log`: told before an install (a few minutes the first time).
 * @param {string} toolsDir
 * @param {string} name
 * @param {{ module: string, version: string }} tool
 * @param {(line: string) => void} [log]
 */
export function ensureGoTool(toolsDir, name, { module, version }, log = () => undefined) {
  const bin = join(toolsDir, 'go', `${name}@${version}`);
  const file = join(bin, name);
  if (existsSync(file)) return file;
  log(`installing ${module}@${version}`);
  mkdirSync(bin, { recursive: true });
  run(go(), ['install', `${module}@${version}`], { env: { ...goEnv(), GOBIN: bin }, cwd: tmpdir() });
  return file;
}
