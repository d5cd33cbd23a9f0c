// The import alias is pasted into generated import statements: it must be a plain module specifier.

/** Package-like segments only: a quote, backslash, space, newline or `${` could break out of the string. */
const ALIAS = /^[@~#$]?[A-Za-z0-9_.+-]*(?:\/[A-Za-z0-9_.+@-]+)*$/;

/**
 * Whether `alias` can stand in an `import ... from "<alias>/x"` without changing the statement.
 *
 * @example
 * isModuleSpecifier("@/blocks"); // true
 * isModuleSpecifier('@/x"; process.exit(1); "'); // false
 */
export function isModuleSpecifier(alias: string): boolean {
  return (
    alias.length > 0 && alias.length <= 200 && ALIAS.test(alias) && !alias.startsWith(".") && !alias.includes("//")
  );
}

/**
 * A project-relative folder that stays inside the project: not absolute, no `..` segment.
 *
 * @example
 * isInsideFolder("src/blocks"); // true
 * isInsideFolder("../shared/migrations"); // false
 */
export function isInsideFolder(folder: string): boolean {
  if (folder === "" || folder.startsWith("/") || /^[A-Za-z]:/.test(folder) || folder.includes("\0")) return false;
  return !folder.split(/[\\/]/).includes("..");
}
