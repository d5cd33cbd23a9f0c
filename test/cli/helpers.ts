// Shared set-up for the CLI unit tests: a throwaway copy of a fixture project, silenced output.
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import { configureOutput } from "../../cli/utils/logger.js";

const created: string[] = [];
afterEach(() => {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Copies test/fixtures/<name> (no node_modules: these tests never install) and silences CLI output.
 *
 * @example
 * const dir = tempProject("hono-bundler");
 */
export function tempProject(fixture: string): string {
  configureOutput({ silent: true });
  const root = mkdtempSync(path.join(tmpdir(), "blocks-unit-"));
  created.push(root);
  const dir = path.join(root, fixture);
  cpSync(path.resolve(import.meta.dirname, "../fixtures", fixture), dir, { recursive: true });
  return dir;
}

/** Resolves to the error a promise rejects with (fails the test if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string; suggestion?: string }> {
  try {
    await promise;
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error("expected a rejection");
}
