// A line-based three-way merge (diff3): the user's edits and the registry's changes both survive.
import { diffArrays } from "diff";

export type MergeResult = { text: string; conflicts: number };

/** Conflict markers as git writes them, naming the two sides as `blocks update` reports them. */
export const MARKERS = { yours: "<<<<<<< yours", separator: "=======", registry: ">>>>>>> registry" } as const;

/**
 * Merges `yours` and `registry`, both descended from `base`. A region changed on one side only takes
 * that side; changed identically on both, it is taken once; changed differently, it becomes a conflict
 * between markers. Like git, changes to adjacent lines count as one region.
 *
 * @example
 * merge3("a\nb\nc\n", "A\nb\nc\n", "a\nb\nC\n"); // { text: "A\nb\nC\n", conflicts: 0 }
 */
export function merge3(base: string, yours: string, registry: string): MergeResult {
  const o = lines(base);
  const a = lines(yours);
  const b = lines(registry);
  const inA = matches(o, a);
  const inB = matches(o, b);
  const out: string[] = [];
  let conflicts = 0;
  let i = 0;
  let ia = 0;
  let ib = 0;
  while (i < o.length || ia < a.length || ib < b.length) {
    if (i < o.length && inA[i] === ia && inB[i] === ib) {
      out.push(o[i] as string);
      i += 1;
      ia += 1;
      ib += 1;
      continue;
    }
    // The next base line both sides kept ends the changed region (or the end of all three).
    let next = i;
    while (next < o.length && (inA[next] === -1 || inB[next] === -1)) next += 1;
    const endA = next < o.length ? (inA[next] as number) : a.length;
    const endB = next < o.length ? (inB[next] as number) : b.length;
    const chunkO = o.slice(i, next);
    const chunkA = a.slice(ia, endA);
    const chunkB = b.slice(ib, endB);
    if (same(chunkA, chunkO)) out.push(...chunkB);
    else if (same(chunkB, chunkO) || same(chunkA, chunkB)) out.push(...chunkA);
    else {
      conflicts += 1;
      out.push(
        `${MARKERS.yours}\n`,
        ...terminated(chunkA),
        `${MARKERS.separator}\n`,
        ...terminated(chunkB),
        `${MARKERS.registry}\n`,
      );
    }
    i = next;
    ia = endA;
    ib = endB;
  }
  return { text: out.join(""), conflicts };
}

/** Lines with their line endings, so the merge gives back the exact bytes of each side. */
function lines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** For each base line, its index in `other` when the longest common subsequence keeps it, else -1. */
function matches(base: string[], other: string[]): number[] {
  const found = new Array<number>(base.length).fill(-1);
  let i = 0;
  let j = 0;
  for (const change of diffArrays(base, other)) {
    const count = change.value.length;
    if (change.added) j += count;
    else if (change.removed) i += count;
    else {
      for (let k = 0; k < count; k += 1) found[i + k] = j + k;
      i += count;
      j += count;
    }
  }
  return found;
}

function same(x: string[], y: string[]): boolean {
  return x.length === y.length && x.every((line, index) => line === y[index]);
}

/** A side's last line may lack its newline; a marker must still start a line of its own. */
function terminated(chunk: string[]): string[] {
  const last = chunk.at(-1);
  return last === undefined || last.endsWith("\n") ? chunk : [...chunk.slice(0, -1), `${last}\n`];
}
