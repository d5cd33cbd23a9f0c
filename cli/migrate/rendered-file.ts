// A file a migration plan writes: its project-relative path and its text.
export type RenderedFile = { path: string; content: string };
