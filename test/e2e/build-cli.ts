// Before the end-to-end suite: builds dist/ once (the CLI users get from `npm pack`) and installs TypeScript 7 once for the strict checks.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { execa } from "execa";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Path of a TypeScript 7 `tsc`, or "" when it could not be installed (its checks then fail, naming why). */
    tsc7: string;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const ts7 = path.join(mkdtempSync(path.join(tmpdir(), "blocks-e2e-ts7-")), "ts7");
  mkdirSync(ts7);
  writeFileSync(path.join(ts7, "package.json"), '{ "private": true }\n');
  const [, install] = await Promise.all([
    execa("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" }),
    execa("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "typescript@7"], {
      cwd: ts7,
      reject: false,
    }),
  ]);
  project.provide("tsc7", install.exitCode === 0 ? path.join(ts7, "node_modules/.bin/tsc") : "");
}
