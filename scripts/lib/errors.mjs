/**
 * What the tooling reads from a thrown value. A catch clause gets `unknown`: these answer the
 * message of an Error or the value itself as text, and the fields a failed child process carries
 * (`execFileSync`'s error: exit status and captured output), absent when it is not one.
 */
import { Buffer } from 'node:buffer';

/** @param {unknown} err */
export function messageOf(err) {
  return err instanceof Error ? err.message : String(err);
}

/**
 * @typedef {{ message: string, status?: number | null, code?: string, stdout?: string | Buffer, stderr?: string | Buffer }} ProcessFailure
 */

/**
 * A thrown value as a child process's failure: its message and, when present, exit status, error
 * code and captured output.
 * @param {unknown} err
 * @returns {ProcessFailure}
 */
export function processFailure(err) {
  const fields = typeof err === 'object' && err !== null ? /** @type {Record<string, unknown>} */ (err) : {};
  const output = (/** @type {unknown} */ value) => (typeof value === 'string' || Buffer.isBuffer(value) ? value : undefined);
  return {
    message: messageOf(err),
    status: typeof fields.status === 'number' ? fields.status : null,
    code: typeof fields.code === 'string' ? fields.code : undefined,
    stdout: output(fields.stdout),
    stderr: output(fields.stderr),
  };
}
