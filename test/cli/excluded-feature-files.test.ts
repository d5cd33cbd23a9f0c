// Which files of a block's optional features `add` leaves out: those of every feature not chosen,
// except a file a chosen feature lists too (a helper two stores share).
import { describe, expect, it } from "vitest";
import { excludedFeatureFiles } from "../../cli/add/choose-features.js";
import type { RegistryBlock } from "../../cli/registry/types.js";

const block = {
  name: "idempotency",
  description: "",
  files: [],
  features: {
    "mysql-store": {
      description: "",
      files: ["idempotency/stores/mysql-store.ts", "idempotency/stores/takeover-recovery.ts"],
    },
    "sqlite-store": {
      description: "",
      files: ["idempotency/stores/sqlite-store.ts", "idempotency/stores/takeover-recovery.ts"],
    },
  },
} as unknown as RegistryBlock;

describe("excludedFeatureFiles", () => {
  it("keeps a file two features share when either is chosen (it was left out whenever the other was not)", () => {
    expect([...excludedFeatureFiles([block], new Set(["sqlite-store"]))]).toEqual([
      "idempotency/stores/mysql-store.ts",
    ]);
  });

  it("leaves out the shared file with every feature that lists it", () => {
    expect([...excludedFeatureFiles([block], new Set())].sort()).toEqual([
      "idempotency/stores/mysql-store.ts",
      "idempotency/stores/sqlite-store.ts",
      "idempotency/stores/takeover-recovery.ts",
    ]);
  });
});
