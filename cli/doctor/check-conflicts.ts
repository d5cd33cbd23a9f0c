// Static check: no vendored file still holds the conflict markers of a `blocks update`.
import path from "node:path";
import type { Lock } from "../config/lock-file.js";
import { unresolvedConflicts } from "../update/conflict-markers.js";
import { readIfExists } from "../utils/files.js";
import { finding, type Finding } from "./finding.js";

/**
 * One finding per unresolved conflict, at the line of its `<<<<<<< yours`.
 *
 * @example
 * await checkConflicts("/app", lock); // [{ rule: "unresolved-conflict", file: "src/blocks/logger/context.ts", line: 12, ... }]
 */
export async function checkConflicts(root: string, lock: Lock): Promise<Finding[]> {
  const findings: Finding[] = [];
  const files = Object.values(lock.blocks).flatMap((block) => Object.keys(block.files));
  for (const file of [...new Set(files)].sort()) {
    const text = await readIfExists(path.join(root, file));
    for (const line of text === undefined ? [] : unresolvedConflicts(text)) {
      findings.push(
        finding(
          "unresolved-conflict",
          file,
          line,
          "a conflict from `blocks update` is still marked (<<<<<<< yours ... >>>>>>> registry)",
        ),
      );
    }
  }
  return findings;
}
