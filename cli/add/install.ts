// Installs the planned packages with the project's own package manager.
import { execa } from "execa";
import { installCommand, type PackageManager } from "../project/package-manager.js";
import { BlocksError } from "../utils/errors.js";
import { spinner } from "../utils/spinner.js";
import type { DependencyPlan } from "./plan-dependencies.js";

/**
 * The commands that install `plan`, as shown by --dry-run and --no-install.
 *
 * @example
 * installCommands("npm", { dependencies: ["pg@^8"], devDependencies: [] }); // [["npm", "install", "pg@^8"]]
 */
export function installCommands(manager: PackageManager, plan: DependencyPlan): string[][] {
  return [
    ...(plan.dependencies.length ? [installCommand(manager, plan.dependencies, false)] : []),
    ...(plan.devDependencies.length ? [installCommand(manager, plan.devDependencies, true)] : []),
  ];
}

/**
 * @example
 * await installDependencies("/app", "pnpm", { dependencies: ["pg@^8"], devDependencies: [] });
 */
export async function installDependencies(root: string, manager: PackageManager, plan: DependencyPlan): Promise<void> {
  for (const [command, ...args] of installCommands(manager, plan)) {
    const line = [command, ...args].join(" ");
    const progress = spinner(`Running ${line}`);
    try {
      await execa(command as string, args, { cwd: root, stdin: "ignore" });
      progress.succeed(`Installed with ${line}`);
    } catch (cause) {
      progress.fail(`${line} failed`);
      const detail = (cause as { stderr?: string }).stderr?.trim().split("\n").slice(-5).join("\n");
      throw new BlocksError("INSTALL_FAILED", `Installing dependencies with ${command} failed.`, {
        cause: detail || cause,
        suggestion: `The files are written; run \`${line}\` yourself once the problem is fixed.`,
      });
    }
  }
}
