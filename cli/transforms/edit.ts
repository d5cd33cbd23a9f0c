// An edit of a file's text: what every import transform returns, and what transform.ts splices in.

/** A replacement of `text[start, end)`; transforms return edits instead of mutating the tree. */
export type Edit = { start: number; end: number; text: string };
