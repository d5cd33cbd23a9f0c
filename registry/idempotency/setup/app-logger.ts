// In this repository only: the default variant, so setup/index.ts type-checks. `add` copies the chosen variant here.
export * from "./app-logger-console";
