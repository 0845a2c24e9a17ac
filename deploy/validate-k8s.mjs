#!/usr/bin/env node
// Validates rendered Kubernetes objects (a YAML stream on stdin) against the official schemas
// that the kubernetes-models package carries — offline. Prints one JSON line per object:
// {kind, name, valid, errors}. Custom resources without a bundled schema say so.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const groupDir = (apiVersion) => {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  return group ? `${group}/${version}` : version;
};

const input = readFileSync(0, 'utf8');
for (const doc of parseAllDocuments(input)) {
  const object = doc.toJS();
  if (!object) continue;
  const name = object.metadata?.name;
  let Model;
  try {
    Model = (await import(`kubernetes-models/${groupDir(object.apiVersion)}/${object.kind}`))[object.kind];
  } catch {
    console.log(JSON.stringify({ kind: object.kind, apiVersion: object.apiVersion, name, valid: null, errors: ['no bundled schema'] }));
    continue;
  }
  try {
    new Model(object).validate();
    console.log(JSON.stringify({ kind: object.kind, apiVersion: object.apiVersion, name, valid: true, errors: [] }));
  } catch (err) {
    console.log(
      JSON.stringify({ kind: object.kind, apiVersion: object.apiVersion, name, valid: false, errors: [String(err.message ?? err)] }),
    );
  }
}
