// Scaffolds the demo's throwaway Express app; its packages come from this repository's node_modules.
import { cpSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { packageRoot } from "../utils/package-root.js";

/**
 * Links node_modules instead of installing: the demo then runs offline and in seconds, and `add`
 * runs with --no-install (what it would install is still printed).
 *
 * @example
 * const app = scaffoldDemoApp(); // "/tmp/blocks-demo-XXXX/shop"
 */
export function scaffoldDemoApp(): string {
  const root = packageRoot();
  const dir = path.join(mkdtempSync(path.join(tmpdir(), "blocks-demo-")), "shop");
  mkdirSync(path.join(dir, "src"), { recursive: true });
  const pkg = {
    name: "shop",
    private: true,
    type: "module",
    dependencies: { express: "^5.3.0" },
    devDependencies: { typescript: "~5.9" },
  };
  writeFileSync(path.join(dir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
  const tsconfig = {
    compilerOptions: {
      target: "ES2022",
      module: "ESNext",
      moduleResolution: "Bundler",
      strict: true,
      skipLibCheck: true,
      types: ["node"],
      paths: { "@/*": ["./src/*"] },
    },
    include: ["src"],
  };
  writeFileSync(path.join(dir, "tsconfig.json"), `${JSON.stringify(tsconfig, null, 2)}\n`);
  cpSync(path.join(root, "templates/demo/server.ts"), path.join(dir, "src/server.ts"));
  symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
  return dir;
}
