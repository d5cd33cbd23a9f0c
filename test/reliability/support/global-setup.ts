// Once per reliability run: says which services it uses, and writes docs/reliability.md at the end.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { writeReport } from "./report";
import { missingServices } from "./services";

export default function setup(project: TestProject) {
  const started = performance.now();
  const dir = mkdtempSync(path.join(os.tmpdir(), "blocks-reliability-"));
  project.provide("reliabilityFiguresDir", dir);
  const missing = missingServices({ redis: true });
  const using = `PostgreSQL at DATABASE_URL, Redis at REDIS_URL; soak ${process.env.RELIABILITY_SOAK_SECONDS ?? 60} s`;
  console.log(
    `\n[reliability] ${missing ? `${missing} Scenarios whose name lists a missing variable are skipped.` : using}\n`,
  );
  return () => {
    console.log(`\n${writeReport(dir, (performance.now() - started) / 1000)}\n`);
    rmSync(dir, { recursive: true, force: true });
  };
}
