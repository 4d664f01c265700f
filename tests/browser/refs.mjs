// Prints, for each JSON schema of the JSON array on stdin, the console's resolveRefs of it (one
// JSON array on stdout): tests/api/console.rs checks that it is what the bridge's own resolver
// (src/schema.rs) makes of the same schemas.
import { resolveRefs } from "../../console/forms.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(JSON.stringify(JSON.parse(input).map(resolveRefs)));
