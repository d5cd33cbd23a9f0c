// Whether the project's own Vitest config would run the vendored tests: `nest new` (Nest 12) writes
// `include: ['**/*.spec.ts']`, and then `vitest run src/blocks` finds no test file and exits 1.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

const CONFIG_FILES = ["vitest.config", "vite.config"].flatMap((name) =>
  ["ts", "mts", "cts", "js", "mjs", "cjs"].map((ext) => `${name}.${ext}`),
);

/**
 * The config file and its `include` globs when none of them matches `testFile` (a vendored test, relative to
 * `root`); undefined when the config has no literal `include` (Vitest's default runs `*.test.ts`) or one matches.
 *
 * @example
 * vitestLeavesOut("/app", "src/blocks/idempotency/errors.test.ts"); // { config: "vitest.config.ts", include: ["**\/*.spec.ts"] }
 */
export function vitestLeavesOut(root: string, testFile: string): { config: string; include: string[] } | undefined {
  const config = CONFIG_FILES.find((file) => existsSync(path.join(root, file)));
  if (!config) return undefined;
  const text = readFileSync(path.join(root, config), "utf8");
  // The test options' include (coverage's has its own object); a computed one is not guessed at.
  const list = /(?<![\w.])include\s*:\s*\[([^\]]*)\]/.exec(text.replace(/coverage\s*:\s*\{[^}]*\}/g, ""))?.[1];
  if (list === undefined) return undefined;
  const include = [...list.matchAll(/(["'`])([^"'`]+)\1/g)].map((match) => match[2] ?? "");
  if (include.length === 0 || include.some((glob) => globToRegExp(glob).test(testFile))) return undefined;
  return { config, include };
}

/** A glob as Vitest reads one (`**`, `*`, `?`, `[jt]`, `{a,b}`, `?(x)`), anchored; a leading `./` is the root. */
function globToRegExp(glob: string): RegExp {
  const text = glob.replace(/^\.\//, "");
  let source = "";
  let braces = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? "";
    const close = text.indexOf(")", i);
    if ("?*+@".includes(char) && text[i + 1] === "(" && close > i) {
      // An extglob, as in Vitest's default `*.{test,spec}.?(c|m)[jt]s?(x)`.
      const times = { "?": "?", "*": "*", "+": "+", "@": "" }[char];
      source += `(?:${text.slice(i + 2, close).replace(/[.+^$\\]/g, "\\$&")})${times}`;
      i = close;
    } else if (text.startsWith("**/", i)) {
      source += "(?:.*/)?";
      i += 2;
    } else if (text.startsWith("**", i)) {
      source += ".*";
      i += 1;
    } else if (char === "*") {
      source += "[^/]*";
    } else if (char === "?") {
      source += "[^/]";
    } else if (char === "[" || char === "]") {
      source += char;
    } else if (char === "{") {
      braces++;
      source += "(?:";
    } else if (char === "}" && braces > 0) {
      braces--;
      source += ")";
    } else if (char === "," && braces > 0) {
      source += "|";
    } else {
      source += char.replace(/[.+^$()|{}\\]/g, "\\$&");
    }
  }
  return new RegExp(`^${source}$`);
}
