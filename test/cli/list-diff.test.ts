// `blocks list` and `blocks diff`: what exists, and what changed locally against the registry.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { runAdd } from "../../cli/commands/add.js";
import { runDiff } from "../../cli/commands/diff.js";
import { runInit } from "../../cli/commands/init.js";
import { runList } from "../../cli/commands/list.js";
import { loadRegistry } from "../../cli/registry/manifest.js";
import { contentHash } from "../../cli/utils/files.js";
import { rejection, tempProject } from "./helpers.js";

async function added() {
  const dir = tempProject("fastify-commonjs");
  await runInit({ cwd: dir, yes: true });
  await runAdd({ blocks: ["idempotency"], cwd: dir, yes: true, install: false });
  return dir;
}

describe("blocks list", () => {
  it("lists every block with its description and frameworks, and marks the added ones", async () => {
    const dir = await added();
    const { blocks } = await runList({ cwd: dir });
    // Every block of the registry, in its order; only the one added is marked.
    const names = (await loadRegistry()).blocks.map((block) => block.name);
    expect(blocks.map((block) => [block.name, block.added])).toEqual(
      names.map((name) => [name, name === "idempotency"]),
    );
    expect(names).toEqual(expect.arrayContaining(["idempotency", "logger"]));
    expect(blocks[0]?.frameworks).toEqual(expect.arrayContaining(["express", "fastify", "hono"]));
    expect(blocks.every((block) => block.description.length > 20)).toBe(true);
  });
});

describe("blocks diff", () => {
  it("reports nothing right after add", async () => {
    expect((await runDiff({ cwd: await added() })).changes).toEqual([]);
  });

  it("shows the user's edit as a patch, and a deleted file as missing", async () => {
    const dir = await added();
    // The statuses live in block-error-codes.ts: edit a line the file really has, so the edit cannot be a no-op.
    const codes = path.join(dir, "src/blocks/idempotency/block-error-codes.ts");
    const text = readFileSync(codes, "utf8");
    expect(text).toContain("REQUEST_IN_PROGRESS: 409");
    writeFileSync(codes, text.replace("REQUEST_IN_PROGRESS: 409", "REQUEST_IN_PROGRESS: 425"));
    rmSync(path.join(dir, "src/blocks/idempotency/execution.ts"));
    const { changes } = await runDiff({ cwd: dir, block: "idempotency" });
    expect(changes.map(({ file, status }) => [file, status])).toEqual([
      ["src/blocks/idempotency/block-error-codes.ts", "edited"],
      ["src/blocks/idempotency/execution.ts", "missing"],
    ]);
    expect(changes[0]?.patch).toMatch(/^-.*409/m);
    expect(changes[0]?.patch).toMatch(/^\+.*425/m);
  });

  it("tells an untouched file whose registry version moved on from a user edit", async () => {
    const dir = await added();
    const types = path.join(dir, "src/blocks/idempotency/types.ts");
    writeFileSync(types, "// older registry version\n");
    const lockFile = path.join(dir, "blocks.lock.json");
    const lock = JSON.parse(readFileSync(lockFile, "utf8"));
    lock.blocks.idempotency.files["src/blocks/idempotency/types.ts"] = contentHash("// older registry version\n");
    writeFileSync(lockFile, JSON.stringify(lock));
    const { changes } = await runDiff({ cwd: dir });
    expect(changes).toEqual([expect.objectContaining({ file: "src/blocks/idempotency/types.ts", status: "outdated" })]);
  });

  it("refuses a block that was never added", async () => {
    const error = await rejection(runDiff({ cwd: await added(), block: "logger" }));
    expect(error.code).toBe("UNKNOWN_BLOCK");
  });
});
