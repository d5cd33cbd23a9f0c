// The folders registry items are written to live as long as the command that loaded them, inside a long-lived process too.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runRegistryBuild } from "../../cli/commands/registry.js";
import { loadRegistry } from "../../cli/registry/manifest.js";
import { withItemFolders } from "../../cli/registry/registry-item-source.js";

const out = mkdtempSync(path.join(tmpdir(), "blocks-item-folders-"));
let item = "";
beforeAll(async () => {
  await runRegistryBuild({ out, silent: true });
  item = path.join(out, "audit.json");
  writeFileSync(
    item,
    JSON.stringify({
      name: "audit-log",
      type: "registry:item",
      files: [
        {
          path: "audit-log/index.ts",
          target: "audit-log/index.ts",
          content: "export const audit = 1;\n",
          type: "registry:lib",
        },
      ],
    }),
  );
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

const exists = (folder: string) => readdirSync(path.dirname(folder)).includes(path.basename(folder));
const itemFolder = (root: string) => path.dirname(root);

describe("withItemFolders", () => {
  it("removes the folder of a registry loaded inside it once the work resolves", async () => {
    const root = await withItemFolders(async () => {
      const registry = await loadRegistry(undefined, { items: [item] });
      expect(exists(itemFolder(registry.root))).toBe(true);
      return registry.root;
    });
    expect(exists(itemFolder(root))).toBe(false);
  });

  it("removes it when the work throws after loading", async () => {
    let root = "";
    const failed = await withItemFolders(async () => {
      root = (await loadRegistry(undefined, { items: [item] })).root;
      throw new Error("planning failed");
    }).catch((err: Error) => err);
    expect(failed).toBeInstanceOf(Error);
    expect(root).not.toBe("");
    expect(exists(itemFolder(root))).toBe(false);
  });

  it("overlapping calls each remove only their own: one ending never pulls the other's files away", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let slowRoot = "";
    const slow = withItemFolders(async () => {
      slowRoot = (await loadRegistry(undefined, { items: [item] })).root;
      await held;
      // Still there although the quick call ended meanwhile.
      return readdirSync(path.join(slowRoot, "audit-log"));
    });
    const quickRoot = await withItemFolders(async () => (await loadRegistry(undefined, { items: [item] })).root);
    expect(exists(itemFolder(quickRoot))).toBe(false);
    release();
    expect(await slow).toEqual(["index.ts"]);
    expect(exists(itemFolder(slowRoot))).toBe(false);
  });
});
