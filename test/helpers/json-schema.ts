// A small JSON Schema (2020-12) validator for the keywords our OpenAPI document uses. It runs in
// workerd, where validators that compile schemas with `new Function` (ajv) cannot. A keyword it
// does not know is an error, never silently passed: when the document starts using a new one,
// this file learns it (or the test says so).

type Json = Record<string, any>;

/** Keywords that only describe: they constrain nothing. */
const ANNOTATIONS = new Set(["description", "example", "examples", "default", "title", "deprecated", "readOnly", "writeOnly", "$schema"]);
const KNOWN = new Set([
  ...ANNOTATIONS,
  "$ref",
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "format",
  "allOf",
  "anyOf",
  "oneOf",
]);

const FORMATS: Record<string, (s: string) => boolean> = {
  "date-time": (s) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(s) && !Number.isNaN(Date.parse(s)),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  email: (s) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s),
  uri: (s) => {
    try {
      return Boolean(new URL(s));
    } catch {
      return false;
    }
  },
  binary: () => true,
};

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function hasType(value: unknown, type: string): boolean {
  if (type === "integer") return Number.isInteger(value);
  if (type === "number") return typeof value === "number" && Number.isFinite(value);
  return typeOf(value) === type;
}

/**
 * The reasons `value` does not fit `schema` (empty when it fits). `root` is the document the
 * `$ref`s point into (`#/components/schemas/…`).
 */
export function schemaErrors(schema: Json | boolean, value: unknown, root: Json, at = "$"): string[] {
  if (schema === true) return [];
  if (schema === false) return [`${at}: no value is allowed here`];
  const errors: string[] = [];
  for (const keyword of Object.keys(schema))
    if (!KNOWN.has(keyword)) throw new Error(`json-schema.ts does not know the keyword "${keyword}" (at ${at})`);

  if (schema.$ref) {
    const target = (schema.$ref as string)
      .replace(/^#\//, "")
      .split("/")
      .reduce((node: Json | undefined, part) => node?.[part.replaceAll("~1", "/").replaceAll("~0", "~")], root);
    if (!target) throw new Error(`unresolved $ref ${schema.$ref}`);
    errors.push(...schemaErrors(target, value, root, at));
  }
  if (schema.type !== undefined) {
    const types: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => hasType(value, t)))
      return [...errors, `${at}: expected ${types.join("|")}, got ${typeOf(value)} ${JSON.stringify(value)}`];
  }
  if (schema.enum && !schema.enum.some((v: unknown) => JSON.stringify(v) === JSON.stringify(value)))
    errors.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value))
    errors.push(`${at}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`);

  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && [...value].length < schema.minLength)
      errors.push(`${at}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === "number" && [...value].length > schema.maxLength) errors.push(`${at}: longer than ${schema.maxLength}`);
    if (schema.pattern && !new RegExp(schema.pattern, "u").test(value))
      errors.push(`${at}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
    if (schema.format && FORMATS[schema.format] && !FORMATS[schema.format]!(value))
      errors.push(`${at}: ${JSON.stringify(value)} is not a ${schema.format}`);
    if (schema.format && !FORMATS[schema.format]) throw new Error(`json-schema.ts does not know the format "${schema.format}" (at ${at})`);
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) errors.push(`${at}: ${value} < ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) errors.push(`${at}: ${value} > ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum)
      errors.push(`${at}: ${value} <= ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum)
      errors.push(`${at}: ${value} >= ${schema.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) errors.push(`${at}: fewer than ${schema.minItems} items`);
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) errors.push(`${at}: more than ${schema.maxItems} items`);
    if (schema.items !== undefined) value.forEach((item, i) => errors.push(...schemaErrors(schema.items, item, root, `${at}[${i}]`)));
  }
  if (typeOf(value) === "object") {
    const object = value as Json;
    for (const name of schema.required ?? []) if (!(name in object)) errors.push(`${at}.${name}: required`);
    const properties: Json = schema.properties ?? {};
    for (const [name, sub] of Object.entries(object)) {
      if (name in properties) errors.push(...schemaErrors(properties[name], sub, root, `${at}.${name}`));
      else if (schema.additionalProperties !== undefined)
        errors.push(...schemaErrors(schema.additionalProperties, sub, root, `${at}.${name}`));
    }
  }
  for (const sub of schema.allOf ?? []) errors.push(...schemaErrors(sub, value, root, at));
  if (schema.anyOf && !schema.anyOf.some((sub: Json) => schemaErrors(sub, value, root, at).length === 0))
    errors.push(`${at}: fits none of anyOf (${schema.anyOf.map((s: Json) => schemaErrors(s, value, root, at).join("; ")).join(" | ")})`);
  if (schema.oneOf) {
    const fits = schema.oneOf.filter((sub: Json) => schemaErrors(sub, value, root, at).length === 0).length;
    if (fits !== 1) errors.push(`${at}: fits ${fits} of oneOf, not exactly one`);
  }
  return errors;
}
