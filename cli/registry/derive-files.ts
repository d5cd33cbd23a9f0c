// A block's file list, derived from its folder: which files are tests and which belong to one framework.
import { readdirSync } from "node:fs";
import path from "node:path";
import type { RegistryFile } from "./types.js";

/** The declaration itself is read by the CLI, never copied. */
export const DECLARATION_FILE = "block.json";

/**
 * Every file under `<root>/<block>/`, as registry-relative paths with their tags:
 * - `test`: `*.test.ts`, and helpers under a `testing/` folder (only the tests import them);
 * - `framework`: files under `adapters/` or `middleware/` named after a framework (`express.ts`,
 *   `express.test.ts`), and anywhere a file named `<name>-<framework>` (`examples/metrics-hono.ts`).
 *
 * @example
 * deriveFiles("/repo/registry", "logger", ["express", "hono"]);
 * // [{ path: "logger/README.md" }, ..., { path: "logger/adapters/hono.ts", framework: "hono" }]
 */
export function deriveFiles(root: string, block: string, frameworks: readonly string[]): RegistryFile[] {
  return listFiles(path.join(root, block))
    .filter((relative) => relative !== DECLARATION_FILE)
    .map((relative) => tagFile(`${block}/${relative}`, frameworks));
}

/**
 * The tags of one registry-relative path, by the rules of `deriveFiles`.
 *
 * @example
 * tagFile("idempotency/adapters/express.test.ts", ["express"]); // { path, framework: "express", test: true }
 */
export function tagFile(registryPath: string, frameworks: readonly string[]): RegistryFile {
  const segments = registryPath.split("/");
  const stem = (segments.at(-1) ?? "").replace(/(\.test)?\.[cm]?[jt]sx?$/, "");
  const inVariantFolder = segments.slice(0, -1).some((segment) => segment === "adapters" || segment === "middleware");
  const framework = frameworks.find((name) => (inVariantFolder && stem === name) || stem.endsWith(`-${name}`));
  const test = /\.test\.[cm]?[jt]sx?$/.test(registryPath) || segments.slice(0, -1).includes("testing");
  return { path: registryPath, ...(framework ? { framework } : {}), ...(test ? { test: true } : {}) };
}

function listFiles(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) return listFiles(path.join(dir, entry.name), relative);
      return entry.isFile() ? [relative] : [];
    });
}
