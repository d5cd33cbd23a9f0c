// The READMEs hold as written: the root README's `blocks` commands run in order without a terminal (as
// in CI), and every `@/...` import in a block README's snippets names a registry file that exports it.
// Found: `npx blocks init && npx blocks add idempotency` stopped on a prompt without a TTY, and the
// error-handler README imported "@/error-handler/adapters/fetch", a path no project has.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { Project } from "ts-morph";
import { describe, expect, it } from "vitest";
import { withFreshDatabase } from "./fresh-database.js";
import { tempProject } from "./helpers.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const url = process.env.DATABASE_URL;

/** The fenced blocks of one language in a Markdown text. */
function fenced(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp("```" + language + "\\n([\\s\\S]*?)```", "g"))].map(
    (match) => match[1] ?? "",
  );
}

/** The `npx blocks ...` commands of the root README's shell blocks, one per line, comments dropped. */
function readmeCommands(): string[][] {
  const lines = fenced(readFileSync(path.join(REPO, "README.md"), "utf8"), "sh").flatMap((block) => block.split("\n"));
  return lines
    .flatMap((line) => line.replace(/\s+#.*$/, "").split("&&"))
    .map((command) => command.trim())
    .filter((command) => /^npx \S+/.test(command) && !command.startsWith("npx vitest"))
    .map((command) => command.split(/\s+/));
}

describe("the root README", () => {
  it("runs `npx` only on the installed bin (`blocks`): the npm name is not published, so `npx backend-blocks` would be a 404", () => {
    const commands = readmeCommands();
    expect(commands.length).toBeGreaterThanOrEqual(3);
    expect(commands.map((command) => command[1])).toEqual(commands.map(() => "blocks"));
    expect(readFileSync(path.join(REPO, "README.md"), "utf8")).toMatch(/not on the npm registry yet/);
  });

  it("its blocks commands run as written in order without a terminal (migrate --apply on a database of its own, when DATABASE_URL is set)", async () => {
    const dir = tempProject("hono-bundler");
    // "For teams" builds the team's own registry folder, shaped as that section says.
    mkdirSync(path.join(dir, "team-registry/audit-log"), { recursive: true });
    writeFileSync(path.join(dir, "team-registry/registry.json"), JSON.stringify({ version: 1, frameworks: {} }));
    writeFileSync(
      path.join(dir, "team-registry/audit-log/block.json"),
      JSON.stringify({ name: "audit-log", description: "Append-only audit log" }),
    );
    writeFileSync(
      path.join(dir, "team-registry/audit-log/index.ts"),
      "export const audit = (line: string): string => line;\n",
    );
    const withDatabase = async (databaseUrl: string | undefined) => {
      for (const [, , ...args] of readmeCommands()) {
        if (args.includes("--apply") && databaseUrl === undefined) continue;
        // Installing packages is the end-to-end suite's part (it needs the network); everything else runs as written.
        const install = args[0] === "add" ? ["--no-install"] : [];
        const run = await execa(
          path.join(REPO, "node_modules/.bin/tsx"),
          [path.join(REPO, "cli/index.ts"), ...args, ...install],
          {
            cwd: dir,
            stdin: "ignore",
            reject: false,
            env: { DATABASE_URL: databaseUrl ?? "" },
          },
        );
        expect(run.exitCode, `blocks ${args.join(" ")}\n${run.stdout}\n${run.stderr}`).toBe(0);
      }
    };
    if (url) await withFreshDatabase(url, withDatabase);
    else await withDatabase(undefined);
    expect(existsSync(path.join(dir, "blocks.json"))).toBe(true);
    expect(existsSync(path.join(dir, "src/blocks/idempotency/README.md"))).toBe(true);
  }, 120_000);
});

describe("the blocks' READMEs", () => {
  const registry = path.join(REPO, "registry");
  const project = new Project({ skipAddingFilesFromTsConfig: true, skipFileDependencyResolution: true });
  const readmes = readdirSync(registry, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".md"));

  it.each(readmes)(
    "%s: every `@/...` import of its snippets is `@/blocks/<a registry file>` and names what that file exports",
    (readme) => {
      const problems: string[] = [];
      for (const snippet of fenced(readFileSync(path.join(registry, readme), "utf8"), "ts")) {
        for (const [, names = "", specifier = ""] of snippet.matchAll(
          /import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+"(@\/[^"]+)"/g,
        )) {
          const relative = specifier.replace(/^@\/blocks\//, "").replace(/\.js$/, "");
          const file = [`${relative}.ts`, `${relative}/index.ts`]
            .map((candidate) => path.join(registry, candidate))
            .find((candidate) => existsSync(candidate));
          if (!specifier.startsWith("@/blocks/") || !file) {
            problems.push(`${specifier}: no such registry file`);
            continue;
          }
          const exported = (project.getSourceFile(file) ?? project.addSourceFileAtPath(file)).getExportedDeclarations();
          for (const name of names
            .split(",")
            .map(
              (part) =>
                part
                  .trim()
                  .replace(/^type\s+/, "")
                  .split(/\s+as\s+/)[0] ?? "",
            )
            .filter(Boolean)) {
            if (!exported.has(name)) problems.push(`${specifier} does not export ${name}`);
          }
        }
      }
      expect(problems).toEqual([]);
    },
  );
});
