// Finds the conflict markers `blocks update` wrote and the user has not resolved yet.
import { MARKERS } from "./merge3.js";

/**
 * The 1-based lines where an unresolved conflict of `blocks update` starts (its `<<<<<<< yours` line).
 * Only complete regions count (start, separator and end in order), so a string that merely mentions a
 * marker is not one.
 *
 * @example
 * unresolvedConflicts("a\n<<<<<<< yours\nb\n=======\nc\n>>>>>>> registry\n"); // [2]
 */
export function unresolvedConflicts(text: string): number[] {
  const lines = text.split("\n");
  const starts: number[] = [];
  let open: number | undefined;
  let separated = false;
  lines.forEach((line, index) => {
    if (line === MARKERS.yours) {
      open = index + 1;
      separated = false;
    } else if (line === MARKERS.separator && open !== undefined) separated = true;
    else if (line === MARKERS.registry && open !== undefined && separated) {
      starts.push(open);
      open = undefined;
    }
  });
  return starts;
}
