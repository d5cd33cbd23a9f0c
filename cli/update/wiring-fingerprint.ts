// Recognizes a wiring module an older `add` wrote and nobody edited since: that file was never recorded in the lock.
import { createHash } from "node:crypto";

/** The table name the fingerprints were taken with, where a project's own (`add --table`) stood. */
export const TABLE_PLACEHOLDER = "__blocks_table__";

/**
 * A short hash of the file's code, blind to what differed between projects when `add` wrote it: the
 * import specifiers (alias, relative, `.js`), the table name and the layout a formatter gives
 * (whitespace, quotes, semicolons, trailing commas). Any other change gives another fingerprint.
 *
 * @example
 * wiringFingerprint(readFileSync("src/idempotency-setup.ts", "utf8"), "orders_idempotency"); // "3f9c0a1b2d4e5f60"
 */
export function wiringFingerprint(text: string, table?: string): string {
  let code = text.replace(
    /(from\s*|import\s*\(\s*)(["'])([^"']+)\2/g,
    (_all, keyword: string, _quote, specifier: string) => `${keyword}"${moduleName(specifier)}"`,
  );
  if (table)
    code = code.split(`"${table}"`).join(`"${TABLE_PLACEHOLDER}"`).split(`'${table}'`).join(`"${TABLE_PLACEHOLDER}"`);
  const normalized = code
    .replace(/'/g, '"')
    .replace(/\s+/g, "")
    .replace(/;/g, "")
    .replace(/,([)\]}])/g, "$1");
  return createHash("sha256").update(normalized).digest("hex").slice(0, 16);
}

/** A package stays as it is; a project file is named by its last segment: "../blocks/idempotency/index.js" -> "idempotency". */
function moduleName(specifier: string): string {
  if (!specifier.startsWith(".") && !specifier.includes("/blocks")) return specifier;
  const segments = specifier
    .replace(/\.(js|ts|mjs|cjs)$/, "")
    .replace(/\/index$/, "")
    .split("/");
  return segments.at(-1) ?? specifier;
}
