// block.json has a schema: every shipped declaration passes it, and a broken one is refused at load, naming each problem.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Project } from "ts-morph";
import { describe, expect, it } from "vitest";
import { checkHandler } from "../../cli/doctor/check-handler.js";
import { checkRoutes } from "../../cli/doctor/check-routes.js";
import { declarationProblems } from "../../cli/registry/block-schema.js";
import { loadRegistry } from "../../cli/registry/manifest.js";

const REGISTRY = path.resolve(import.meta.dirname, "../../registry");
const folders = readdirSync(REGISTRY, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

describe("block.json's schema", () => {
  it.each(folders)("%s/block.json passes it", (folder) => {
    expect(declarationProblems(JSON.parse(readFileSync(path.join(REGISTRY, folder, "block.json"), "utf8")))).toEqual(
      [],
    );
  });

  it("names each problem: a misspelt field, a wrong type, a doctor name that is no identifier", () => {
    const problems = declarationProblems({
      name: "demo",
      description: "d",
      dependancies: { pg: "^8" },
      features: { cache: { description: "c", prompt: "no" } },
      doctor: { handler: { class: "new Handler()", options: 2, expects: ["logger"], defaultTtlMs: 1 } },
    });
    expect(problems).toEqual([
      expect.stringContaining("features.cache.prompt: Invalid input: expected boolean"),
      expect.stringContaining("doctor.handler.class: a JavaScript identifier"),
      "doctor.handler.fixes: one fix for each rule its check reports: handler-observability",
      expect.stringMatching(/Unrecognized key: "dependancies"/),
    ]);
  });

  it("a doctor part without the fixes of its rules, with an unknown rule or an empty fix, is refused, naming the rule", () => {
    const routes = {
      calls: ["once"],
      fixes: { "route-user-id": "Pass getUserId.", "route-require-key": "Pass requireKey." },
    };
    const problems = declarationProblems({
      name: "demo",
      description: "d",
      doctor: {
        routes,
        handler: {
          class: "OnceHandler",
          options: 2,
          expects: ["logger"],
          defaultTtlMs: 1,
          fixes: { "handler-observability": " ", "cache-ttl": "Shorten the cache's TTL." },
        },
      },
    });
    expect(problems).toEqual([
      expect.stringContaining("doctor.routes.fixes.route-permanent-error: Invalid input: expected string"),
      expect.stringContaining("doctor.handler.fixes.handler-observability: a fix: what to change"),
      "doctor.handler.fixes: cache-ttl: not a rule this check reports (handler-observability)",
    ]);
  });

  it("a registry whose block.json breaks it does not load, and the error names the file and the field", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "blocks-schema-"));
    try {
      mkdirSync(path.join(root, "demo"));
      writeFileSync(path.join(root, "registry.json"), JSON.stringify({ version: 1, frameworks: {} }));
      writeFileSync(
        path.join(root, "demo/block.json"),
        JSON.stringify({ name: "demo", description: "d", setup: "yes" }),
      );
      writeFileSync(path.join(root, "demo/index.ts"), "export {};\n");
      const refused = await loadRegistry(root).catch((err: Error & { code?: string }) => err);
      expect(refused).toMatchObject({ code: "INVALID_REGISTRY" });
      expect((refused as Error).message).toMatch(
        /demo\/block\.json is not a valid block declaration: setup: Invalid input: expected object/,
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("doctor checks the names a block declares, not names of its own, and prints the fixes it declares", () => {
  const project = (code: string) => {
    const files = new Project({ useInMemoryFileSystem: true, skipAddingFilesFromTsConfig: true });
    const file = files.createSourceFile("/app/src/app.ts", code);
    return { root: "/app", files: [file], relative: () => "src/app.ts" };
  };

  it("a renamed handler class, route call and plugin are checked under their new names, the old names no longer are, and each finding carries the block's fix", () => {
    const code = [
      "const a = new OnceHandler(store, undefined, {});",
      "const b = new IdempotencyHandler(store, undefined, {});",
      'app.post("/pay", once(a, {}));',
      'app.post("/pay", idempotent(b, {}));',
    ].join("\n");
    const names = {
      class: "OnceHandler",
      options: 2,
      expects: ["logger"],
      defaultTtlMs: 1000,
      fixes: { "handler-observability": "Give OnceHandler a logger." },
    };
    expect(checkHandler(project(code), new Set(), names).map((found) => [found.message, found.fix])).toEqual([
      ["new OnceHandler(...) has no logger", "Give OnceHandler a logger."],
    ]);
    const fixes = {
      "route-user-id": "Pass getUserId to once().",
      "route-permanent-error": "Pass isPermanentError to once().",
      "route-require-key": "Pass requireKey to once().",
    };
    const routes = checkRoutes(project(code), [{ calls: ["once"], plugins: [], responseOnly: [], fixes }]);
    expect(routes.map((found) => [found.message, found.fix])).toEqual([
      ["once() on POST has no getUserId", "Pass getUserId to once()."],
      ["once() on POST has no isPermanentError", "Pass isPermanentError to once()."],
      ["once() on POST does not set requireKey: true", "Pass requireKey to once()."],
    ]);
    const plugin = project('app.register(oncePlugin, { getUserId: () => "u", isPermanentError: () => false });');
    expect(
      checkRoutes(plugin, [{ calls: ["once"], plugins: ["oncePlugin"], responseOnly: [], fixes }]).map(
        (found) => found.message,
      ),
    ).toEqual(["oncePlugin does not set requireKey: true"]);
    expect(checkRoutes(project(code), [])).toEqual([]);
  });

  it.each(["../../../etc/cron.d/x.ts", "/etc/passwd", "demo/../../x.ts"])(
    "a variant whose target %s leaves the blocks folder does not load",
    async (target) => {
      const root = mkdtempSync(path.join(tmpdir(), "blocks-schema-"));
      try {
        mkdirSync(path.join(root, "demo"));
        writeFileSync(path.join(root, "registry.json"), JSON.stringify({ version: 1, frameworks: {} }));
        writeFileSync(path.join(root, "demo/a.ts"), "export {};\n");
        writeFileSync(
          path.join(root, "demo/block.json"),
          JSON.stringify({ name: "demo", description: "d", variants: [{ target, choices: [{ path: "demo/a.ts" }] }] }),
        );
        const refused = await loadRegistry(root).catch((err: Error & { code?: string }) => err);
        expect(refused).toMatchObject({ code: "INVALID_REGISTRY" });
        expect((refused as Error).message).toContain(`the target ${target} is outside the blocks folder`);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
});
