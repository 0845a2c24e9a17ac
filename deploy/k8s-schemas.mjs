// JSON schemas for kubeconform, made offline (our own converter, after the logic of kubeconform's
// scripts/openapi2jsonschema.py and the "standalone-strict" layout of yannh/kubernetes-json-schema):
// - Kubernetes: every definition of the API server's OpenAPI v2 document (api/openapi-spec/swagger.json
//   of the k8s.io/kubernetes Go module) that names a group/version/kind, with every $ref inlined,
//   written as <dir>/v<version>-standalone-strict/<kind>[-<group>]-<version>.json;
// - CRDs: each served version's openAPIV3Schema, written as <dir>/<group>/<kind>_<version>.json.
// Strict: an object schema that lists its properties refuses any other (additionalProperties: false)
// unless it says x-kubernetes-preserve-unknown-fields or names its additionalProperties itself.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const INT_OR_STRING = () => ({ oneOf: [{ type: 'string' }, { type: 'integer' }] });
// The API server takes quantities as strings or numbers (`cpu: 1`).
const QUANTITY = () => ({ oneOf: [{ type: 'string' }, { type: 'number' }] });

/** Makes one schema node strict and JSON-Schema-proper, recursively (CRD and OpenAPI v2 alike). */
export function strictify(node) {
  if (Array.isArray(node)) return node.map(strictify);
  if (!node || typeof node !== 'object') return node;
  if (node.format === 'int-or-string' || node['x-kubernetes-int-or-string'] === true) {
    const { description } = node;
    return { ...(description ? { description } : {}), ...INT_OR_STRING() };
  }
  const out = {};
  for (const [key, value] of Object.entries(node)) {
    // Property names are data, not keywords: recurse into their schemas, keep the names.
    if (key === 'properties' || key === 'patternProperties' || key === 'definitions') {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, strictify(schema)]));
    } else if (key === 'x-kubernetes-validations' || key === 'enum' || key === 'required' || key === 'default' || key === 'example') {
      out[key] = value;
    } else {
      out[key] = strictify(value);
    }
  }
  if (out.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  delete out.nullable;
  if (out.properties && out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }
  return out;
}

const refName = (ref) => ref.replace(/^#\/definitions\//, '');

/** Inlines every $ref of an OpenAPI v2 definition; a reference back into itself (JSONSchemaProps) becomes `{}`. */
function inline(node, definitions, stack) {
  if (Array.isArray(node)) return node.map((item) => inline(item, definitions, stack));
  if (!node || typeof node !== 'object') return node;
  if (typeof node.$ref === 'string') {
    const name = refName(node.$ref);
    const siblings = { ...node };
    delete siblings.$ref;
    if (name === 'io.k8s.apimachinery.pkg.api.resource.Quantity') return { ...siblings, ...QUANTITY() };
    if (stack.includes(name)) return { ...siblings };
    const target = definitions[name];
    if (!target) throw new Error(`unresolved $ref ${node.$ref}`);
    return { ...inline(target, definitions, [...stack, name]), ...(siblings.description ? { description: siblings.description } : {}) };
  }
  const out = {};
  for (const [key, value] of Object.entries(node)) out[key] = inline(value, definitions, stack);
  return out;
}

const fileKind = (group, kind, version) =>
  `${kind.toLowerCase()}${group ? `-${group.split('.')[0].toLowerCase()}` : ''}-${version.toLowerCase()}`;

/** Writes the standalone strict schemas of one Kubernetes version; returns how many. */
export function writeKubernetesSchemas(swaggerPath, outDir, k8sVersion) {
  const { definitions } = JSON.parse(readFileSync(swaggerPath, 'utf8'));
  const dir = join(outDir, `v${k8sVersion}-standalone-strict`);
  mkdirSync(dir, { recursive: true });
  let count = 0;
  for (const [name, definition] of Object.entries(definitions)) {
    for (const gvk of definition['x-kubernetes-group-version-kind'] ?? []) {
      const schema = strictify(inline(definition, definitions, [name]));
      const apiVersion = gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version;
      // A file names one kind: the document must say so.
      if (schema.properties?.kind) schema.properties.kind = { type: 'string', enum: [gvk.kind] };
      if (schema.properties?.apiVersion) schema.properties.apiVersion = { type: 'string', enum: [apiVersion] };
      writeFileSync(join(dir, `${fileKind(gvk.group, gvk.kind, gvk.version)}.json`), JSON.stringify(schema));
      count++;
    }
  }
  return count;
}

/** Writes <outDir>/<group>/<kind>_<version>.json for every version of every CRD in the files; returns their names. */
export function writeCrdSchemas(crdFiles, outDir) {
  const written = [];
  for (const file of crdFiles) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const crd = doc.toJS();
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      const { group, names } = crd.spec;
      for (const version of crd.spec.versions ?? []) {
        const openApi = version.schema?.openAPIV3Schema;
        if (!openApi) continue;
        const schema = strictify(openApi);
        schema.properties.kind = { type: 'string', enum: [names.kind] };
        schema.properties.apiVersion = { type: 'string', enum: [`${group}/${version.name}`] };
        mkdirSync(join(outDir, group), { recursive: true });
        const name = join(group, `${names.kind.toLowerCase()}_${version.name}.json`);
        writeFileSync(join(outDir, name), JSON.stringify(schema));
        written.push(name);
      }
    }
  }
  return written;
}
