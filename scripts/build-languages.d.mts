// Types of scripts/build-languages.mjs for the TypeScript configs that run it (vitest.config.ts, vitest.node.config.ts).
export declare function languageCodes(dir?: string): string[];
export declare function languageModules(codes?: string[]): Record<string, string>;
export declare function buildLanguages(): string[];
