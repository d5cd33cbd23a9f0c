// Reports any error as message, cause and suggestion (or as JSON with --json), then exits 1 (or the code given).
import { BlocksError, describeCause, isBlocksError } from "./errors.js";
import { highlighter } from "./highlighter.js";
import { printJson } from "./logger.js";

/**
 * @example
 * runAdd(options).catch((err) => handleError(err, options));
 */
export function handleError(err: unknown, options: { json?: boolean | undefined } = {}, exitCode = 1): never {
  const error = isBlocksError(err)
    ? err
    : new BlocksError("UNEXPECTED", "Something unexpected went wrong.", {
        cause: err,
        suggestion: "Re-run with --json to see details, and report it if it persists.",
      });
  if (options.json) {
    printJson({ ok: false, error: error.toJSON() });
  } else {
    const cause = describeCause(error.cause);
    process.stderr.write(`${highlighter.error(`✖ ${error.message}`)} ${highlighter.dim(`[${error.code}]`)}\n`);
    if (cause) process.stderr.write(`  ${highlighter.dim("cause:")} ${cause}\n`);
    if (error.suggestion) process.stderr.write(`  ${highlighter.info("→")} ${error.suggestion}\n`);
  }
  process.exit(exitCode);
}
