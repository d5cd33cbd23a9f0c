// A unified diff between two versions of a file: plain for --json, coloured for people.
import { createTwoFilesPatch } from "diff";
import { highlighter } from "./highlighter.js";

/**
 * @example
 * const patch = unifiedDiff("src/blocks/idempotency/handler.ts", registryVersion, localVersion);
 * logger.log(colourDiff(patch));
 */
export function unifiedDiff(
  file: string,
  before: string,
  after: string,
  labels = { before: "registry", after: "local" },
): string {
  const patch = createTwoFilesPatch(
    `${labels.before}/${file}`,
    `${labels.after}/${file}`,
    before,
    after,
    undefined,
    undefined,
    { context: 3 },
  );
  return patch
    .split("\n")
    .filter((line) => !line.startsWith("Index:") && !/^=+$/.test(line))
    .join("\n")
    .trimEnd();
}

/** Colours added, removed and hunk lines (kleur leaves them plain without a terminal). */
export function colourDiff(patch: string): string {
  return patch
    .split("\n")
    .map((line) => {
      if (line.startsWith("+++") || line.startsWith("---")) return highlighter.path(line);
      if (line.startsWith("+")) return highlighter.added(line);
      if (line.startsWith("-")) return highlighter.removed(line);
      if (line.startsWith("@@")) return highlighter.info(line);
      return line;
    })
    .join("\n");
}
