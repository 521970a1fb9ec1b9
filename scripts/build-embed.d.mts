// Types of build-embed.mjs, which vitest.config.ts runs before every test run.
export declare function buildEmbed(): Promise<string>;
