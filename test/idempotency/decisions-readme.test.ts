// The README's list of log lines is what users alert on: it must name every message of the decision table, at its level.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DECISIONS, type DecisionLevel } from "@/blocks/idempotency/decisions";

const readme = readFileSync(new URL("../../registry/idempotency/README.md", import.meta.url), "utf8");

/** The messages of the README's `| level | message |` table, by level, without the "idempotency: " prefix. */
function readmeMessages(): Map<string, Set<string>> {
  const rows = new Map<string, Set<string>>();
  for (const [, level, cell] of readme.matchAll(/^\| (debug|info|warn|error) \| (.+) \|$/gm)) {
    const messages = [...cell!.matchAll(/`(?:idempotency: )?([^`]+)`/g)].map((match) => match[1]!);
    rows.set(level!, new Set(messages));
  }
  return rows;
}

describe("the README's list of log lines", () => {
  const rows = readmeMessages();

  it("has a row per level", () => {
    expect([...rows.keys()].sort()).toEqual(["debug", "error", "info", "warn"]);
  });

  it.each(Object.entries(DECISIONS))("names %s's message at its level", (_, decision) => {
    const message = decision.msg.replace(/^idempotency: /, "");
    expect(
      rows.get(decision.level as DecisionLevel),
      `README.md: add \`${message}\` to the ${decision.level} row`,
    ).toContain(message);
  });

  it("names no message the block does not write", () => {
    const written = new Set(
      Object.values(DECISIONS).map((decision) => `${decision.level} ${decision.msg.replace(/^idempotency: /, "")}`),
    );
    const listed = [...rows].flatMap(([level, messages]) => [...messages].map((message) => `${level} ${message}`));
    expect(listed.filter((line) => !written.has(line))).toEqual([]);
  });
});
