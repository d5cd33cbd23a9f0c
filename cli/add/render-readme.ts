// Renders a vendored README's TypeScript snippets in the project's import style (alias or relative, `.js` under NodeNext).
import path from "node:path";
import type { ImportContext } from "../transforms/resolve-specifier.js";
import { transformSource } from "../transforms/transform.js";

const SNIPPET = /```(ts|typescript)\n([\s\S]*?)```/g;

/**
 * Each snippet is rewritten as if it were a file of the app beside the blocks folder (src/app.ts for
 * src/blocks). `ctx.planned` should name every registry file, added or not (the logger block, another
 * framework's adapter): a snippet importing a file it lacks is left as written.
 *
 * @example
 * renderReadme(text, ctx); // 'from "@/blocks/idempotency"' -> 'from "../blocks/idempotency"' without an alias
 */
export function renderReadme(text: string, ctx: ImportContext): string {
  const app = path.posix.join(path.posix.dirname(ctx.blocksDir), "app.ts");
  return text.replace(SNIPPET, (whole, lang: string, code: string) => {
    try {
      return `\`\`\`${lang}\n${transformSource(code, "snippet.ts", { ...ctx, from: { target: app } })}\`\`\``;
    } catch {
      return whole;
    }
  });
}
