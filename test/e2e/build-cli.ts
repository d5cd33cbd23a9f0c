// Builds dist/ once before the end-to-end suite, so it always runs the CLI users get from `npm pack`.
import { execa } from "execa";

export default async function buildCli(): Promise<void> {
  await execa("npx", ["tsc", "-p", "tsconfig.build.json"], { stdio: "inherit" });
}
