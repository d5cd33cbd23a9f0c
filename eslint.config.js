// Lint rules for the CLI, the registry blocks, tests and benchmarks.
import js from "@eslint/js";
import process from "node:process";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "test/fixtures/", "bench/results/", "bench/.build/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  // Vendored code lands in projects whose own lint is type-checked (`nest new` writes recommendedTypeChecked):
  // it must pass there with no disable comment, so the registry is held to the same rules here.
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({
    ...config,
    files: ["registry/**/*.ts"],
  })),
  {
    files: ["registry/**/*.ts"],
    languageOptions: {
      parserOptions: {
        project: process.env.LINT_STRICT ? "./tsconfig.registry-lint-strict.json" : "./tsconfig.registry-lint.json",
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
);
