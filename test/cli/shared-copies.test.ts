// A helper several blocks vendor has one source: each block keeps its own copy (blocks stay standalone), and the copies never drift.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const REGISTRY = path.resolve(import.meta.dirname, "../../registry");

/** Each group: the same file in several blocks, the first one being the source the others copy. */
const COPIES: string[][] = [["logger/redact-url.ts", "error-handler/redact-url.ts"]];

describe("helpers vendored by several blocks", () => {
  it.each(COPIES.map(([source = "", ...copies]) => [source, copies] as const))("%s has identical copies in %j", (source, copies) => {
    const text = readFileSync(path.join(REGISTRY, source), "utf8");
    for (const copy of copies) expect(readFileSync(path.join(REGISTRY, copy), "utf8"), `${copy} drifted from ${source}: copy it again`).toBe(text);
  });
});
