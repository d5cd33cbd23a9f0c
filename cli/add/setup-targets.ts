// Where the wiring `add` writes lands; its own file so commands can name it without loading the renderer (and ts-morph).
import path from "node:path";
import type { BlocksConfig } from "../config/blocks-config.js";

/**
 * Beside the blocks folder: src/blocks -> src/idempotency-setup.ts, its test and the cron entry.
 *
 * @example
 * setupTargets(config).test; // "src/idempotency-setup.test.ts"
 */
export function setupTargets(config: BlocksConfig): { setup: string; test: string; job: string } {
  const parent = path.posix.dirname(config.dir);
  const at = (file: string) => path.posix.normalize(path.posix.join(parent, file));
  return { setup: at("idempotency-setup.ts"), test: at("idempotency-setup.test.ts"), job: at("jobs/idempotency-maintenance.ts") };
}
